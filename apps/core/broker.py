"""The filesystem broker ``make run`` uses by default, with messages that appear whole.

kombu's filesystem transport writes a message in place under its final name, and a consumer
takes any file with that name without a lock: a worker polling while a web process is still
writing can move away and parse a half-written message. Here a message is written under a
name no consumer matches (a leading dot) and renamed into place, which on one filesystem is
atomic: the consumer sees the whole message or nothing.

Configured by ``CELERY_BROKER_TRANSPORT`` (config/settings/components/celery.py) whenever the
broker URL is ``filesystem://``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from typing_extensions import override


def write_message(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (a name consumers ignore), flushed to the OS."""
    with open(path, "wb", buffering=0) as handle:
        handle.write(data)


class Channel(filesystem.Channel):
    @override
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override] # kombu's own classes disagree on it
        """Put ``payload`` onto ``queue``: written aside, then renamed to the name kombu's
        consumer looks for (``<ms>_<uuid>.<queue>.msg``, oldest first by the prefix)."""
        filename = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, filename)
        staging = os.path.join(self.data_folder_out, f".{filename}.tmp")
        try:
            write_message(staging, str_to_bytes(dumps(payload)))
            os.rename(staging, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(staging)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
