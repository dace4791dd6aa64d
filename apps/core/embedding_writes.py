"""Write a batch of computed embeddings back to their rows in one statement.

Memories and articles are embedded the same way: rows are loaded, their texts sent to the
provider in batches, and each batch's vectors written back. The write-back is this one
``UPDATE … FROM unnest(…)`` for both tables and every caller (the drain, the article
embedding, ``reembed``); they differ only in the guards they pick.

One statement per batch rather than one ``UPDATE`` per row: a batch is a single round trip,
and each guard is evaluated by Postgres against the row as it is at write time, so a
concurrent writer (the other of task and backfill, an edit, a ``forget``) is respected
without a lock held across the provider call. The caller picks the guards:

* ``only_unembedded`` — write only rows whose ``embedding`` is still NULL. The on-commit task
  and the backfill may both embed a row; only the first write lands, and only it is counted.
* ``versions`` — write only rows still at the version that was embedded. An edit made while
  the provider was working bumped the version (and cleared the vector), so the stale vector
  is discarded and the edit's own task fills it in.
* ``tenant_id`` — write only rows of that tenant. ``reembed`` overwrites vectors computed by
  one tenant's provider; its rows were selected by tenant, and the write checks it again so
  a vector can never land on another tenant's row.

Every write stamps the vectors with ``model``, the fingerprint of the configuration that made
them (``EmbeddingConfig.fingerprint``): recall compares a query only with vectors of its own
model (docs/embeddings.md, "Which model made a vector").

The table must have the columns ``id`` (uuid), ``embedding`` (vector), ``embedded_at``
(timestamptz), ``embedding_model`` (text), and — when those guards are used — ``version``
(int) and ``tenant_id``.
This module is deliberately only the write: which rows to load, how to batch, which
telemetry to emit and what to do when the provider is down stay with each app.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db import connections
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.vectors import vector_literal


def store_vectors(
    *,
    table: str,
    ids: Sequence[uuid.UUID | str],
    vectors: Sequence[Sequence[float]],
    model: str,
    only_unembedded: bool,
    versions: Sequence[int] | None = None,
    tenant_id: uuid.UUID | str | None = None,
) -> int:
    """Set ``embedding = vectors[i]``, ``embedded_at = now()`` and ``embedding_model = model``
    on row ``ids[i]`` for each ``i``, on the primary, in one ``UPDATE``; return how many rows
    were written.

    ``table`` is a model's ``_meta.db_table`` — an identifier from code, never user input.
    A row that fails a guard (see the module docstring) or no longer exists is skipped and
    not counted. ``ids``, ``vectors`` and ``versions`` (when given) must be the same length.
    """
    if len(vectors) != len(ids) or (versions is not None and len(versions) != len(ids)):
        # unnest() of unequal arrays pads the shorter ones with NULL: a missing vector would
        # silently "embed" a row with NULL and stamp embedded_at.
        raise ValueError("ids, vectors and versions must have the same length")
    connection = connections[PRIMARY]
    # Columns of the derived table ``v`` and the guards on the target ``t``, with their
    # parameters in placeholder order (the SET clause's embedded_at and model come first).
    if not model:
        raise ValueError("a vector must name the model that made it")
    params: list[Any] = [timezone.now(), model, [str(pk) for pk in ids]]
    columns = ["unnest(%s::uuid[]) AS id"]
    conditions = ["t.id = v.id"]
    if versions is not None:
        columns.append("unnest(%s::int[]) AS version")
        params.append(list(versions))
        conditions.append("t.version = v.version")
    columns.append("unnest(%s::text[]) AS embedding")
    params.append([vector_literal(vector) for vector in vectors])
    if only_unembedded:
        conditions.append("t.embedding IS NULL")
    if tenant_id is not None:
        conditions.append("t.tenant_id = %s")
        params.append(tenant_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {connection.ops.quote_name(table)} AS t
               SET embedding = v.embedding::vector, embedded_at = %s, embedding_model = %s
              FROM (SELECT {", ".join(columns)}) AS v
             WHERE {" AND ".join(conditions)}
            """,  # noqa: S608 - the table name comes from code; all values are parameters
            params,
        )
        return int(cursor.rowcount)
