from django.db import migrations

from apps.memory.migrations._tenant_index import drop_tenant_index


class Migration(migrations.Migration):
    """Drop the indexes on tenant_id alone of memories and session turns: every other index on
    those tables that a tenant's reads use starts with it, and for a tenant newer than the last
    ANALYZE the planner chose the bare one (the smallest) and read all of the tenant's rows to
    find one agent's (apps/memory/models.py)."""

    dependencies = [
        ("memory", "0020_memory_search_term"),
        ("tenancy", "0002_idempotency_record"),
    ]

    operations = [
        drop_tenant_index(
            model_name="memory", table="memory_memory", index="memory_memory_tenant_id_35daa9fd"
        ),
        drop_tenant_index(
            model_name="sessionmemory",
            table="memory_sessionmemory",
            index="memory_sessionmemory_tenant_id_18c3b3c2",
        ),
    ]
