"""Floods of each kind of row one key can create, against a running server: session turns,
long-term memories, articles, promotions.

Per case one agent (``flooder``) sends the kind's writes from several connections at once for
a few seconds, with no pause between them. The case then reports what the server refused
(status and code), checks that the flooder's stored rows are exactly what it was told were
written (a refused request left nothing behind), and that nothing of another subject of its
tenant (``bystander``) or of another tenant (whose agent has the same id, ``flooder``)
changed: every row of every tenant-owned table outside the flooder's own, compared before and
after. A case passes when the server refused some of the flood (the bound was reached),
answered no 5xx, and all three checks hold.

Run the server with low bounds (``FLOOD_CASE_BOUNDS``) so a few seconds reach them; the fault
suite and ``make fuzz`` do.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create, tenant_create
from lab.http_client import KeepAliveClient
from lab.memory_bench import distinct_topics

FLOODER = "flooder"
BYSTANDER = "bystander"
BATCH_ITEMS = 10
ARTICLE_TOPICS = distinct_topics(seed=35)
# The server's bounds for a flood case to reach within seconds (its environment and this
# command's must both carry them).
FLOOD_CASE_BOUNDS = {
    "ENGRAM_SESSION_QUOTA_TURNS": "120",
    "ENGRAM_MEMORY_QUOTA_LIVE_ROWS": "150",
    "ENGRAM_KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR": "4",
    "ENGRAM_PROMOTION_SUBJECT_BUDGET_PER_HOUR": "3",
}
# How long the seeded rows must stay unchanged (the worker embedding them) before the
# snapshot every case compares against is taken.
SETTLE_SECONDS = 2.0
SETTLE_TIMEOUT_SECONDS = 90.0


@dataclass(frozen=True)
class Keys:
    tenant_id: str
    other_tenant_id: str
    flooder: str
    bystander: str
    other_tenant_flooder: str


def setup() -> Keys:
    """Two tenants: the flood's (a flooder and a bystander) and another whose agent has the
    flooder's id."""
    run = uuid.uuid4().hex[:8]
    tenant = tenant_create(slug=f"flood-{run}", name="flood cases")
    other = tenant_create(slug=f"flood-other-{run}", name="flood cases, another tenant")

    def key(owner: Any, agent_id: str) -> str:
        return api_key_create(tenant=owner, role=ApiKeyRole.AGENT, agent_id=agent_id).raw_key

    return Keys(
        tenant_id=str(tenant.pk),
        other_tenant_id=str(other.pk),
        flooder=key(tenant, FLOODER),
        bystander=key(tenant, BYSTANDER),
        other_tenant_flooder=key(other, FLOODER),
    )


def seed_neighbours(url: str, keys: Keys) -> None:
    """A memory, session turns, an article and a promotion request for the bystander and for
    the other tenant's agent: the rows the floods must leave alone."""
    for token in (keys.bystander, keys.other_tenant_flooder):
        http = KeepAliveClient(url, token=token)
        tag = uuid.uuid4().hex[:8]
        try:
            http.post_json("/api/v1/memory", {"text": f"The neighbour prefers tea ({tag})."})
            for role, content in (("user", "I deploy on Fridays."), ("assistant", "Noted.")):
                http.post_json(
                    "/api/v1/memory/sessions/neighbour/turns",
                    {"role": role, "content": f"{content} ({tag})", "ttl_seconds": 3600},
                )
            http.post_json(
                "/api/v1/knowledge/articles",
                {
                    "title": f"Neighbour finding {tag}",
                    "body": f"The neighbour's build uses cache {tag}.",
                    "category": "finding",
                },
            )
            http.post_json("/api/v1/memory/promote", {"session_id": "neighbour"})
        finally:
            http.close()


# ----------------------------------------------------------------------------- snapshots


def _owned_tables() -> list[tuple[str, str | None]]:
    """Every table with a ``tenant_id``, with its subject column if it has one."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, array_agg(column_name::text) FROM information_schema.columns "
            "WHERE table_schema = current_schema() GROUP BY table_name"
        )
        rows = cursor.fetchall()
    tables = []
    for table, columns in sorted(rows):
        if "tenant_id" not in columns:
            continue
        subject = next(
            (name for name in ("subject_id", "author_subject_id") if name in columns), None
        )
        tables.append((table, subject))
    return tables


def snapshot(keys: Keys) -> dict[str, dict[str, tuple[int, str]]]:
    """Row count and a digest of every row, per table: of every tenant but the flood's
    (``other_tenants``), and of the flood's tenant outside the flooder's rows
    (``other_subjects``, tables with a subject column only)."""
    taken: dict[str, dict[str, tuple[int, str]]] = {"other_tenants": {}, "other_subjects": {}}
    with connection.cursor() as cursor:
        for table, subject in _owned_tables():
            quoted = connection.ops.quote_name(table)
            scopes = [("other_tenants", "tenant_id <> %s", [keys.tenant_id])]
            if subject is not None:
                scopes.append(
                    (
                        "other_subjects",
                        f"tenant_id = %s AND {connection.ops.quote_name(subject)} <> %s",
                        [keys.tenant_id, FLOODER],
                    )
                )
            for scope, where, params in scopes:
                cursor.execute(
                    f"SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), "  # noqa: S608 - names from the catalogue
                    f"'')) FROM {quoted} t WHERE {where}",
                    params,
                )
                count, digest = cursor.fetchone()
                taken[scope][table] = (int(count), str(digest))
    return taken


def settled_snapshot(keys: Keys) -> dict[str, dict[str, tuple[int, str]]]:
    """A snapshot once it has stopped changing (the worker finished embedding the seed)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
    previous = snapshot(keys)
    while time.monotonic() < deadline:
        time.sleep(SETTLE_SECONDS)
        current = snapshot(keys)
        if current == previous:
            return current
        previous = current
    raise RuntimeError("the neighbours' rows kept changing before any flood started")


def changed_tables(
    before: dict[str, dict[str, tuple[int, str]]], after: dict[str, dict[str, tuple[int, str]]]
) -> dict[str, list[str]]:
    return {
        scope: sorted(table for table in after[scope] if after[scope][table] != tables.get(table))
        for scope, tables in before.items()
    }


def _scalar(sql: str, params: list[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return int(row[0]) if row else 0


# ----------------------------------------------------------------------------- the cases


Request = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class FloodCase:
    name: str
    #: The ``n``-th request of connection ``connection``.
    request: Callable[[int, int, str], Request]
    #: The rows an accepted response stands for.
    written: Callable[[str, bytes], int]
    #: The flooder's stored rows of this kind.
    stored_sql: str


def _session_turn(connection_number: int, n: int, run: str) -> Request:
    session = f"flood-{connection_number}"
    body = {
        "role": "user" if n % 2 == 0 else "assistant",
        "content": f"I prefer deploying with tool {run}-{connection_number}-{n}.",
        "ttl_seconds": 3600,
    }
    return f"/api/v1/memory/sessions/{session}/turns", body


def _memory_batch(connection_number: int, n: int, run: str) -> Request:
    items = [
        {"text": f"Flood fact {run}-{connection_number}-{n}-{i}: cache key {uuid.uuid4().hex}."}
        for i in range(BATCH_ITEMS)
    ]
    return "/api/v1/memory/batch", {"items": items}


def _article(connection_number: int, n: int, run: str) -> Request:
    tag = f"{run}-{connection_number}-{n}"
    # Sentences on unrelated topics, so the novelty gate takes each for a new article.
    first = (connection_number * 1009 + n) * 3
    sentences = " ".join(ARTICLE_TOPICS[(first + i) % len(ARTICLE_TOPICS)] + "." for i in range(3))
    body = {"title": f"Flood finding {tag}", "body": sentences, "category": "finding"}
    return "/api/v1/knowledge/articles", body


def _promote(connection_number: int, n: int, run: str) -> Request:
    # The sessions the turn flood wrote, each requested over and over.
    return "/api/v1/memory/promote", {"session_id": f"flood-{(connection_number + n) % 6}"}


def _one_if_created(status: str, _payload: bytes) -> int:
    return 1 if status == "201" else 0


def _batch_items(status: str, payload: bytes) -> int:
    if not status.startswith("2"):
        return 0
    return len(json.loads(payload)["data"])


def _enqueued(status: str, payload: bytes) -> int:
    if not status.startswith("2"):
        return 0
    return 1 if json.loads(payload)["data"]["enqueued"] else 0


CASES = (
    FloodCase(
        "session_turns",
        _session_turn,
        _one_if_created,
        "SELECT count(*) FROM memory_sessionmemory WHERE tenant_id = %s AND subject_id = %s",
    ),
    FloodCase(
        "memories",
        _memory_batch,
        _batch_items,
        "SELECT count(*) FROM memory_memory WHERE tenant_id = %s AND subject_id = %s",
    ),
    FloodCase(
        "articles",
        _article,
        _one_if_created,
        "SELECT count(*) FROM knowledge_article WHERE tenant_id = %s AND author_subject_id = %s",
    ),
    FloodCase(
        "promotions",
        _promote,
        _enqueued,
        "SELECT count(*) FROM memory_promotionjob WHERE tenant_id = %s AND subject_id = %s",
    ),
)


def _label(status: str, payload: bytes) -> str:
    if status.startswith("2") or not status.isdigit():
        return status
    try:
        return f"{status} {json.loads(payload)['error']['code']}"
    except (ValueError, KeyError, TypeError):
        return f"{status} no_envelope"


def flood(
    case: FloodCase, *, url: str, key: str, seconds: float, connections: int
) -> tuple[Counter[str], int]:
    """Every connection sends the case's requests back to back for ``seconds``; the outcomes
    by status and code, and the rows the accepted ones stand for."""
    outcomes: Counter[str] = Counter()
    written = 0
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    run = uuid.uuid4().hex[:6]

    def send(number: int) -> None:
        nonlocal written
        http = KeepAliveClient(url, token=key)
        try:
            for n in itertools.count():
                if time.monotonic() >= deadline:
                    return
                path, body = case.request(number, n, run)
                status, payload = http.post_response(path, body)
                with lock:
                    outcomes[_label(status, payload)] += 1
                    written += case.written(status, payload)
        finally:
            http.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, written


def run_flood_cases(
    *, url: str, seconds: float = 3.0, connections: int = 6, say: Callable[[str], None] = print
) -> dict[str, Any]:
    keys = setup()
    seed_neighbours(url, keys)
    before = settled_snapshot(keys)
    cases = []
    for case in CASES:
        stored_before = _scalar(case.stored_sql, [keys.tenant_id, FLOODER])
        outcomes, written = flood(
            case, url=url, key=keys.flooder, seconds=seconds, connections=connections
        )
        stored = _scalar(case.stored_sql, [keys.tenant_id, FLOODER]) - stored_before
        after = snapshot(keys)
        changed = changed_tables(before, after)
        refused = {label: count for label, count in outcomes.items() if not label.startswith("2")}
        server_errors = sum(
            count for label, count in outcomes.items() if not label[:1].isdigit() or label >= "5"
        )
        report = {
            "case": case.name,
            "requests": sum(outcomes.values()),
            "accepted": {label: count for label, count in outcomes.items() if label[:1] == "2"},
            "refused": dict(sorted(refused.items())),
            "rows_acknowledged": written,
            "rows_stored": stored,
            "server_errors": server_errors,
            "other_subject_tables_changed": changed["other_subjects"],
            "other_tenant_tables_changed": changed["other_tenants"],
        }
        report["passed"] = (
            bool(refused)
            and server_errors == 0
            and stored == written
            and not changed["other_subjects"]
            and not changed["other_tenants"]
        )
        say(
            f"flood {case.name}: {report['requests']} requests, refused {report['refused']}; "
            f"{stored} rows stored of {written} acknowledged; other subject "
            f"{'unchanged' if not changed['other_subjects'] else changed['other_subjects']}, "
            f"other tenant "
            f"{'unchanged' if not changed['other_tenants'] else changed['other_tenants']}"
        )
        cases.append(report)
    return {"cases": cases, "passed": all(case["passed"] for case in cases)}
