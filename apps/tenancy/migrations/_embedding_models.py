"""Shared by the migrations that fill ``embedding_model`` on the rows embedded before the
column existed (memory 0035, knowledge 0010; the migration loader skips modules whose names
start with "_").

Each vector is stamped with the fingerprint of its tenant's embedding provider *as configured
when the migration runs*: its own provider, else the deployment default (the settings of the
release being migrated to). That is the model the rows were embedded with, unless the
provider was changed without a ``reembed``: then the store mixed two models already, stamping
cannot tell them apart, and ``manage.py reembed`` stays the cure.

Batches walk the primary key (its index leads with ``id``), so each batch reads only its own
rows and commits on its own: no long lock, writes continue between batches, and a re-run
after an interruption resumes, because the statement skips rows already stamped. A row
embedded by the previous release while the migration runs (a rolling upgrade) may stay
unstamped; recall treats it as pending and the background migration re-embeds it.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connections, transaction

BATCH_SIZE = 5000


def _tenant_fingerprints(cursor: Any) -> tuple[list[str], list[str]]:
    from apps.providers.embeddings import EmbeddingConfig

    default = EmbeddingConfig.default().fingerprint
    cursor.execute("SELECT id, embedding_provider, embedding_config FROM tenancy_tenant")
    tenant_ids: list[str] = []
    fingerprints: list[str] = []
    for tenant_id, provider, config in cursor.fetchall():
        fingerprint = default
        if isinstance(config, str):  # Django's cursors leave jsonb to the caller
            config = json.loads(config)
        if provider:
            try:
                parsed = EmbeddingConfig.from_parts(provider=provider, config=config or {})
            except ValueError:
                parsed = EmbeddingConfig(provider=provider)
            fingerprint = parsed.fingerprint
        tenant_ids.append(str(tenant_id))
        fingerprints.append(fingerprint)
    return tenant_ids, fingerprints


def stamp_embedding_models(schema_editor: Any, *, table: str) -> None:
    """Fill ``embedding_model`` of ``table``'s embedded, unstamped rows, in batches."""
    alias = schema_editor.connection.alias
    connection = connections[alias]
    with connection.cursor() as reader:
        tenant_ids, fingerprints = _tenant_fingerprints(reader)
        if not tenant_ids:
            return
        reader.execute("SET statement_timeout = 0")
        last = None
        while True:
            after = "" if last is None else " WHERE id > %s"
            reader.execute(
                f"SELECT id FROM {table}{after} ORDER BY id LIMIT %s",  # noqa: S608 - constants
                ([] if last is None else [last]) + [BATCH_SIZE],
            )
            ids = [row[0] for row in reader.fetchall()]
            if not ids:
                break
            with transaction.atomic(using=alias), connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {table} AS t SET embedding_model = f.fingerprint "  # noqa: S608
                    "FROM (SELECT unnest(%s::uuid[]) AS tenant_id, "
                    "unnest(%s::text[]) AS fingerprint) AS f "
                    "WHERE t.id = ANY(%s::uuid[]) AND t.tenant_id = f.tenant_id "
                    "AND t.embedding IS NOT NULL AND t.embedding_model = ''",
                    [tenant_ids, fingerprints, ids],
                )
            last = ids[-1]
        reader.execute("RESET statement_timeout")
