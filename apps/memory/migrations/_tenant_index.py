"""Shared by migrations 0021 and 0022 (the loader skips modules whose names start with "_")."""

import django.db.models.deletion
from django.db import migrations, models


def drop_tenant_index(
    *, model_name: str, table: str, index: str
) -> migrations.SeparateDatabaseAndState:
    """Stop indexing ``table.tenant_id`` alone; the scope indexes that start with it stay.

    Only the index goes. Django's own AlterField would also drop and re-add the foreign key,
    which re-checks every row of the table under lock."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[
            migrations.AlterField(
                model_name=model_name,
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
                f"DROP INDEX IF EXISTS {index}",
                reverse_sql=f"CREATE INDEX IF NOT EXISTS {index} ON {table} (tenant_id)",
                hints={"target_db": "default"},
            ),
        ],
    )
