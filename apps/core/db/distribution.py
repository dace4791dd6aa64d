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

``tests/core/db/test_distribution_keys.py`` holds every table to this, in the models and in
the live catalog, so a new table or constraint cannot quietly break it.
"""

from __future__ import annotations

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
