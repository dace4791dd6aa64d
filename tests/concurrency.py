"""Concurrent writers for tests: threads released together, each on its own database connection,
the way separate web or worker processes race on one row or one quota."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection


@dataclass(frozen=True)
class Race:
    """How a race ended: writes that returned, writes refused with the expected error, and any
    other error as ``"<type>: <message>"`` (so an assertion on the whole shows it)."""

    written: int = 0
    refused: int = 0
    failures: tuple[str, ...] = ()


def race(
    write: Callable[[int], object],
    *,
    writers: int,
    refused_by: type[Exception] | tuple[type[Exception], ...],
) -> Race:
    """Run ``write(index)`` for each index below ``writers``, one thread each, all released by
    one barrier; each thread closes its own connection when done."""
    start = threading.Barrier(writers)
    lock = threading.Lock()
    counts = {"written": 0, "refused": 0}
    failures: list[str] = []

    def run(index: int) -> None:
        failure = None
        try:
            start.wait()
            write(index)
            outcome = "written"
        except refused_by:
            outcome = "refused"
        except Exception as exc:
            outcome, failure = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            connection.close()
        with lock:
            if failure is None:
                counts[outcome] += 1
            else:
                failures.append(failure)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Race(
        written=counts["written"], refused=counts["refused"], failures=tuple(sorted(failures))
    )
