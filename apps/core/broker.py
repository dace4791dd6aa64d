"""kombu transports the workers and web processes use, each correcting one flaw of kombu's own.

**Filesystem** (``make run``'s default broker): messages that appear whole. kombu's filesystem
transport writes a message in place under its final name, and a consumer
takes any file with that name without a lock: a worker polling while a web process is still
writing can move away and parse a half-written message. Here a message is written under a
name no consumer matches (a leading dot) and renamed into place, which on one filesystem is
atomic: the consumer sees the whole message or nothing.

**Redis** (``redis://`` URLs): a lost broker is a connection error, never a crash. When a
worker loses Redis, Celery's consumer first collects the connection (which drops the
transport's connection details) and then closes it. If the first pass could not close every
channel (another channel's close hit the dead server first), the second pass closes the task
channel then: kombu tries to requeue the messages the worker had taken and not yet
acknowledged, builds a Redis client from connection details that are gone, and raises
``AttributeError``. Celery treats that as unrecoverable and the worker exits. Here the missing
details raise Redis's ``ConnectionError`` instead, which the close already ignores; the
messages stay in Redis's unacknowledged set and are delivered again after the visibility
timeout, as after any lost connection, and the worker reconnects.

Configured by ``CELERY_BROKER_TRANSPORT`` (config/settings/components/celery.py) from the
broker URL's scheme.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem, redis
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from redis.exceptions import ConnectionError as RedisConnectionError
from typing_extensions import override


def write_message(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (a name consumers ignore), flushed to the OS."""
    with open(path, "wb", buffering=0) as handle:
        handle.write(data)


class FilesystemChannel(filesystem.Channel):
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


class FilesystemTransport(filesystem.Transport):
    Channel = FilesystemChannel


class RedisChannel(redis.Channel):
    @override
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is None:
            raise RedisConnectionError("the broker connection is already closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)
        return params


class RedisTransport(redis.Transport):
    Channel = RedisChannel
