import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Drop the indexes on tenant_id alone of memories and session turns: every other index on
    those tables that a tenant's reads use starts with it, and for a tenant newer than the last
    ANALYZE the planner chose the bare one (the smallest) and read all of the tenant's rows to
    find one agent's (apps/memory/models.py).

    Only the index goes. Django's own AlterField would also drop and re-add the foreign key,
    which re-checks every row of the table under lock."""

    dependencies = [
        ("memory", "0020_memory_search_term"),
        ("tenancy", "0002_idempotency_record"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="tenant",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenancy.tenant",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_memory_tenant_id_35daa9fd",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS memory_memory_tenant_id_35daa9fd"
                        " ON memory_memory (tenant_id)"
                    ),
                    hints={"target_db": "default"},
                ),
            ],
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="sessionmemory",
                    name="tenant",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenancy.tenant",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS memory_sessionmemory_tenant_id_18c3b3c2",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS memory_sessionmemory_tenant_id_18c3b3c2"
                        " ON memory_sessionmemory (tenant_id)"
                    ),
                    hints={"target_db": "default"},
                ),
            ],
        ),
    ]
