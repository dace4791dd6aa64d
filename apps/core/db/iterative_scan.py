"""pgvector's iterative index scan (``hnsw.iterative_scan``, pgvector 0.8+): whether the server
behind an alias has it, and what a vector read reports about it.

``meta.ann_iterative_scan`` is one derivation for memory recall and knowledge search: ``off``
(an exact scan, no index), ``applied`` (the HNSW read ran with the iterative scan on) or
``unavailable`` (the HNSW read ran without it, because the server's pgvector has no such
setting), with ``meta.ann_iterative_scan_reason`` beside ``unavailable`` only. It says what the
read was issued with, never what a later probe finds.

The probe runs once per database connection: it makes the session load pgvector (a vector
literal) and reads the setting back. A server whose pgvector predates 0.8 has no
``hnsw.iterative_scan``: the session option ``config/settings/components/databases.py`` passes
is then dropped when the library loads, and setting it afterwards would be an error (``hnsw``
is pgvector's reserved prefix), so a read on such a server must not set it at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections

OFF = "off"
APPLIED = "applied"
UNAVAILABLE = "unavailable"
#: Why ``unavailable``: the only way this module knows to get there.
NOT_IN_PGVECTOR = (
    "The server's pgvector has no hnsw.iterative_scan setting (it needs pgvector 0.8.0 or "
    "later): the index was read without the iterative scan and the result completed exactly."
)


@dataclass(frozen=True)
class IterativeScan:
    available: bool
    reason: str | None = None

    def meta(self) -> dict[str, str]:
        """What an index read issued under this support reports."""
        if self.available:
            return {"ann_iterative_scan": APPLIED}
        return {"ann_iterative_scan": UNAVAILABLE, "ann_iterative_scan_reason": self.reason or ""}


def support_from(setting: str | None) -> IterativeScan:
    """The support a server's answer for ``current_setting('hnsw.iterative_scan', true)``
    (after pgvector loaded) means: NULL is a pgvector without the setting."""
    if setting is None:
        return IterativeScan(available=False, reason=NOT_IN_PGVECTOR)
    return IterativeScan(available=True)


def _probe(using: str) -> str | None:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT '[0]'::vector")  # loads pgvector in this session
        cursor.execute("SELECT current_setting('hnsw.iterative_scan', true)")
        row = cursor.fetchone()
    return None if row is None else row[0]


def iterative_scan(using: str) -> IterativeScan:
    """Whether the database behind ``using`` has the iterative scan, probed once per
    connection (a reconnect, to another server after a failover too, probes again)."""
    wrapper: Any = connections[using]
    wrapper.ensure_connection()
    raw = wrapper.connection
    cached = getattr(wrapper, "_engram_iterative_scan", None)
    if cached is not None and cached[0] is raw:
        support: IterativeScan = cached[1]
        return support
    support = support_from(_probe(using))
    wrapper._engram_iterative_scan = (raw, support)
    return support
