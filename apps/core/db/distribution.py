"""How Engram's tables would spread over a Postgres that shards by tenant (docs/deployment.md,
"Sharding by tenant").

Every table of the project's apps is one of two kinds:

* **distributed by ``tenant_id``**: the column is NOT NULL, and the primary key, every unique
  constraint and every foreign key include it, so each of them can be checked inside one
  tenant's shard. Foreign keys between two such tables pair ``tenant_id`` with ``tenant_id``
  (``(tenant_id, project_id) REFERENCES projects_project (tenant_id, id)``): a row can only
  point at a row of its own tenant;
* **a reference table** (below): small, copied whole to every node, and never holding a
  foreign key to a distributed table.

``distribution_plan`` gives the Citus calls for the migrated schema (``manage.py
distribution_plan`` prints them), and ``tests/core/db/test_distribution_keys.py`` holds every
table to this, in the models and in the live catalog, so a new table or constraint cannot
quietly break it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper

DISTRIBUTION_COLUMN = "tenant_id"

#: Tables copied to every node instead of split by tenant, and why.
REFERENCE_TABLES: dict[str, str] = {
    "tenancy_tenant": (
        "The tenants themselves: every distributed table's tenant_id points here, and "
        "authentication reads a tenant before it knows which shard the tenant is on."
    ),
    "tenancy_apikey": (
        "Authentication finds a key by its prefix alone, before any tenant is known, so the "
        "prefix is unique over the whole deployment; superadmin keys have no tenant at all. "
        "Small, and written at most once a minute per key (last_used_at)."
    ),
    "memory_erasurereceipt": (
        "Proof of an erasure outlives the tenant it is about (a tenant erasure must not delete "
        "it) and the operator lists receipts of every tenant at once. One row per erasure."
    ),
}

#: Distributed tables that have no primary key, and why none is needed.
TABLES_WITHOUT_PRIMARY_KEY: dict[str, str] = {
    "memory_search_term": (
        "The keyword postings: derived rows that triggers replace per memory, read by "
        "(tenant_id, subject_id, lexeme). A key would cost every write an index and buy "
        "nothing."
    ),
}


@dataclass(frozen=True)
class DistributionPlan:
    """The tables of the migrated schema by kind, and the Citus calls that distribute them."""

    reference_tables: list[str]
    distributed_tables: list[str]
    #: Django's and third-party apps' tables (auth, content types, migrations, the beat
    #: schedule): left as plain tables on the coordinator.
    local_tables: list[str]
    statements: list[str]

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "reference_tables": self.reference_tables,
            "distributed_tables": self.distributed_tables,
            "local_tables": self.local_tables,
            "statements": self.statements,
        }


def _not_project_tables() -> set[str]:
    return {
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_config is None or not model._meta.app_config.name.startswith("apps.")
    } | {"django_migrations"}


def schema_tables(cursor: CursorWrapper) -> tuple[list[str], list[str]]:
    """The schema's tables: the project's (those of its apps' models and those created by raw
    SQL, like the postings and the usage counts) and everyone else's."""
    cursor.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
        "AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY relname"
    )
    names = [name for (name,) in cursor.fetchall()]
    others = _not_project_tables()
    return [name for name in names if name not in others], [
        name for name in names if name in others
    ]


def _referenced_first(tables: list[str], references: dict[str, set[str]]) -> list[str]:
    """``tables`` ordered so that each comes after the tables it has foreign keys to (Citus
    distributes a table only once the tables it references are distributed)."""
    ordered: list[str] = []
    placed: set[str] = set()
    pending = sorted(tables)
    among = set(tables)
    while pending:
        ready = [
            table for table in pending if (references.get(table, set()) & among) - {table} <= placed
        ]
        if not ready:  # a cycle: cannot happen with today's schema, but never loop forever
            ready = pending[:1]
        ordered.append(ready[0])
        placed.add(ready[0])
        pending.remove(ready[0])
    return ordered


def distribution_plan(connection: BaseDatabaseWrapper) -> DistributionPlan:
    """Read the migrated schema and say how Citus would spread it: every project table is a
    reference table (REFERENCE_TABLES) or distributed by ``tenant_id``, all of them colocated."""
    with connection.cursor() as cursor:
        project, local = schema_tables(cursor)
        cursor.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
            "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace"
        )
        references: dict[str, set[str]] = {}
        for table, target in cursor.fetchall():
            references.setdefault(table, set()).add(target)
    reference = _referenced_first(
        [table for table in project if table in REFERENCE_TABLES], references
    )
    distributed = _referenced_first(
        [table for table in project if table not in REFERENCE_TABLES], references
    )
    statements = [f"SELECT create_reference_table('{table}');" for table in reference]
    for position, table in enumerate(distributed):
        colocation = f", colocate_with => '{distributed[0]}'" if position else ""
        statements.append(
            f"SELECT create_distributed_table('{table}', '{DISTRIBUTION_COLUMN}'{colocation});"
        )
    return DistributionPlan(reference, distributed, local, statements)
