"""Shared by the migrations that key tenant-owned tables for distribution by tenant
(apps/core/db/distribution.py; the loader skips modules whose names start with "_").

Each table's primary key becomes ``(<key>, tenant_id)`` and each relation between two
tenant-owned tables a two-column foreign key ``(tenant_id, <column>) -> (tenant_id, <key>)``.
The key column comes first in the primary key: every lookup by id the ORM makes (a save, a
delete, a refresh, a cascade) keeps using the key's index as before, and a lookup that also
names the tenant uses it too. A sharded database only needs the tenant column to be in the key,
in any position.

Nothing takes a long lock: the new key's index is built CONCURRENTLY and then becomes the
primary key in one ALTER (a catalog change), and each foreign key is added NOT VALID (no scan)
and validated apart, under a lock that lets reads and writes go on. The migrations using these
helpers are non-atomic, so each statement commits on its own.
"""

from django.db import migrations

TENANT = "tenant_id"


def primary_key_with_tenant(*, table: str, key: str = "id") -> list[migrations.RunSQL]:
    """Make ``table``'s primary key ``(key, tenant_id)``. Every foreign key that referenced the
    one-column key must be gone first."""
    index = f"{table}_{key}_tenant_key"
    return [
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS {index} ON {table} ({key}, {TENANT})",
            reverse_sql=f"DROP INDEX CONCURRENTLY IF EXISTS {index}",
            hints={"target_db": "default"},
        ),
        migrations.RunSQL(
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
            f"ADD CONSTRAINT {table}_pkey PRIMARY KEY USING INDEX {index}",
            reverse_sql=f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, "
            f"ADD CONSTRAINT {table}_pkey PRIMARY KEY ({key})",
            hints={"target_db": "default"},
        ),
    ]


def foreign_key_with_tenant(
    *, table: str, column: str, target: str, name: str, target_key: str = "id"
) -> list[migrations.RunSQL]:
    """Constrain ``table.column`` by ``(tenant_id, column) -> target (tenant_id, target_key)``,
    deferred to commit as Django declares its own foreign keys. Django enforces ``on_delete``
    itself, so the key only refuses a row that points at a missing row or at another tenant's."""
    return [
        migrations.RunSQL(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({TENANT}, {column}) "
            f"REFERENCES {target} ({TENANT}, {target_key}) "
            "DEFERRABLE INITIALLY DEFERRED NOT VALID",
            reverse_sql=f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}",
            hints={"target_db": "default"},
        ),
        migrations.RunSQL(
            f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}",
            reverse_sql=migrations.RunSQL.noop,
            hints={"target_db": "default"},
        ),
    ]
