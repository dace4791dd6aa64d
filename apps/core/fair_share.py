"""A fair share of a web process's cores among the subjects it serves (DESIGN §10: limits
follow isolation, per (tenant, subject)).

The in-flight cap (:mod:`apps.core.in_flight`) bounds how many requests one subject has at
once, but inside one web process those requests still run side by side: each takes the GIL in
turn, and a request of another subject that lands beside them waits behind every one of them,
again at each of its round trips to Postgres. So here, while more than one subject has been
served by this process within ``SUBJECT_ACTIVE_WINDOW_SECONDS``, each may *run* at most its
share of the process's cores at a time, ``max(1, cores // active subjects)``; its next request
waits, blocked and costing no CPU, until one of its own ends. A request that waits longer than
``SUBJECT_FAIR_SHARE_WAIT_SECONDS`` is refused as one past the in-flight cap is. A subject
alone in the process runs up to its in-flight cap, so one agent on an idle server is never
slowed by this. The gate is per process: a process's cores are its own (config/gunicorn.py runs
one process per core).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from django.conf import settings

from apps.core.in_flight import RETRY_AFTER_SECONDS, TooManyRequestsInFlight
from apps.core.telemetry import emit


class FairShareGate:
    """Who runs now in this process, and who was served lately; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._running: Counter[Hashable] = Counter()
        self._last_seen: dict[Hashable, float] = {}

    def share(self, *, cores: int, active_window_seconds: float) -> int | None:
        """How many requests each subject may run at once in this process right now: None
        (no bound here) while at most one subject is active."""
        with self._changed:
            return self._share(cores=cores, active_window_seconds=active_window_seconds)

    def _share(self, *, cores: int, active_window_seconds: float) -> int | None:
        cutoff = self._clock() - active_window_seconds
        for subject in [s for s, seen in self._last_seen.items() if seen < cutoff]:
            if not self._running[subject]:
                del self._last_seen[subject]
        active = len(self._last_seen)
        return max(1, cores // active) if active > 1 else None

    @contextmanager
    def turn(
        self,
        subject: Hashable,
        *,
        cores: int,
        active_window_seconds: float,
        wait_seconds: float,
    ) -> Iterator[None]:
        """Run the block as one of ``subject``'s running requests, once its share allows; raise
        :class:`TooManyRequestsInFlight` after ``wait_seconds`` of waiting (nothing held)."""
        deadline = self._clock() + wait_seconds
        waited = False
        with self._changed:
            self._last_seen[subject] = self._clock()
            while (
                share := self._share(cores=cores, active_window_seconds=active_window_seconds)
            ) is not None and self._running[subject] >= share:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    emit("request.subject_fair_share_refused", {"count": 1})
                    raise TooManyRequestsInFlight(
                        f"This subject already runs its share of this server ({share} at a "
                        "time beside other agents); retry when one of its requests ends.",
                        retry_after_seconds=RETRY_AFTER_SECONDS,
                        details={"max_in_flight": share},
                    )
                waited = True
                # Woken when any request of this process ends; a share that grows because the
                # other subjects went quiet is seen at the next wake or at the deadline.
                self._changed.wait(remaining)
            self._running[subject] += 1
        if waited:
            emit("request.subject_fair_share_waited", {"count": 1})
        try:
            yield
        finally:
            with self._changed:
                self._running[subject] -= 1
                if not self._running[subject]:
                    del self._running[subject]
                self._last_seen[subject] = self._clock()
                self._changed.notify_all()


_gate = FairShareGate()


def cores_per_web_process() -> int:
    """This host's cores (those the process may run on) over its ``WEB_PROCESSES``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, int(settings.WEB_PROCESSES)))


@contextmanager
def subject_fair_share_turn(*, tenant_id: object, subject_id: str) -> Iterator[None]:
    """This process's gate for one request of (tenant, subject); a no-op when
    ``SUBJECT_FAIR_SHARE`` is off."""
    if not settings.SUBJECT_FAIR_SHARE:
        yield
        return
    with _gate.turn(
        (tenant_id, subject_id),
        cores=cores_per_web_process(),
        active_window_seconds=float(settings.SUBJECT_ACTIVE_WINDOW_SECONDS),
        wait_seconds=float(settings.SUBJECT_FAIR_SHARE_WAIT_SECONDS),
    ):
        yield
