"""Which models made a table's stored vectors: the distinct ``(tenant_id, embedding_model)``
pairs, and how many rows each has.

Memories and articles each carry ``embedding_model`` (the fingerprint of the model that made
the row's vector) and an index ``(tenant_id, embedding_model, created_at, id) WHERE embedding
IS NOT NULL`` (memory 0036, knowledge 0011). The pairs are read by a skip scan over it: one
index descent per pair, so finding the tenants that still have rows of an old model costs the
same whether the table holds a thousand rows or a hundred million. The counts read the whole
index (an index-only scan), so they are for the status command and the cached metrics, never
for a request.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connections, models

Row = TypeVar("Row", bound=models.Model)

#: The tables whose rows carry a vector and its model (an identifier from code, never input).
MEMORY_TABLE = "memory_memory"
ARTICLE_TABLE = "knowledge_article"

_PAIRS_SQL = """
WITH RECURSIVE pairs(tenant_id, embedding_model) AS (
    (SELECT tenant_id, embedding_model FROM {table}
      WHERE embedding IS NOT NULL {tenant}
      ORDER BY tenant_id, embedding_model LIMIT 1)
    UNION ALL
    SELECT following.tenant_id, following.embedding_model
      FROM pairs CROSS JOIN LATERAL (
           SELECT tenant_id, embedding_model FROM {table}
            WHERE embedding IS NOT NULL {tenant}
              AND (tenant_id, embedding_model) > (pairs.tenant_id, pairs.embedding_model)
            ORDER BY tenant_id, embedding_model LIMIT 1) AS following
)
SELECT tenant_id, embedding_model FROM pairs
"""


def embedding_model_pairs(
    *, table: str, using: str, tenant_id: uuid.UUID | None = None
) -> list[tuple[uuid.UUID, str]]:
    """The distinct ``(tenant_id, embedding_model)`` of ``table``'s embedded rows (of one
    tenant, given ``tenant_id``), in order."""
    tenant = "" if tenant_id is None else "AND tenant_id = %s"
    params: list[Any] = [] if tenant_id is None else [tenant_id, tenant_id]
    with connections[using].cursor() as cursor:
        cursor.execute(_PAIRS_SQL.format(table=table, tenant=tenant), params)
        return [(row[0], str(row[1])) for row in cursor.fetchall()]


def embedding_model_counts(
    *, table: str, using: str, tenant_id: uuid.UUID | None = None
) -> list[tuple[uuid.UUID, str | None, int]]:
    """Rows per ``(tenant_id, embedding_model)``, embedded or not: the rows without a vector
    count under ``None``. Two grouped reads, each answerable from a partial index alone (the
    model index above; for memories, the drain's index of pending rows)."""
    tenant = "" if tenant_id is None else "AND tenant_id = %s"
    params: list[Any] = [] if tenant_id is None else [tenant_id, tenant_id]
    with connections[using].cursor() as cursor:
        cursor.execute(
            f"""
            SELECT tenant_id, embedding_model, count(*) FROM {table}
             WHERE embedding IS NOT NULL {tenant} GROUP BY 1, 2
            UNION ALL
            SELECT tenant_id, NULL, count(*) FROM {table}
             WHERE embedding IS NULL {tenant} GROUP BY 1
            ORDER BY 1, 2
            """,  # noqa: S608 - the table name comes from code; values are parameters
            params,
        )
        return [(row[0], row[1], int(row[2])) for row in cursor.fetchall()]


def oldest_of_other_models(
    model_class: type[Row],
    *,
    tenant_id: uuid.UUID,
    model: str,
    fields: Sequence[str],
    limit: int,
    using: str,
) -> list[Row]:
    """The tenant's ``limit`` oldest embedded rows of ``model_class`` whose vector another
    model than ``model`` made, with ``fields`` loaded: one range of the model index per stale
    model, so a batch of the background migration costs the same at any table size."""
    stale = [
        other
        for _tenant, other in embedding_model_pairs(
            table=model_class._meta.db_table, using=using, tenant_id=tenant_id
        )
        if other != model
    ]
    rows: list[Row] = []
    for other in stale:
        rows += list(
            model_class._default_manager.using(using)
            .filter(tenant_id=tenant_id, embedding__isnull=False, embedding_model=other)
            .order_by("created_at", "id")
            .only("pk", "created_at", *fields)[:limit]
        )
    return sorted(rows, key=lambda row: (row.created_at, row.pk))[:limit]  # type: ignore[attr-defined]
