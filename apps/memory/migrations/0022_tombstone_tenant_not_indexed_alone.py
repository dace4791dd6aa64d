import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Drop the tombstones' index on tenant_id alone, as 0021 did for memories and session
    turns: every write clears its text's tombstone, and for a tenant newer than the last
    ANALYZE that read went through the bare index, over every agent's tombstones."""

    dependencies = [("memory", "0021_tenant_not_indexed_alone")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="memorytombstone",
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
                    "DROP INDEX IF EXISTS memory_memorytombstone_tenant_id_e465020c",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS memory_memorytombstone_tenant_id_e465020c"
                        " ON memory_memorytombstone (tenant_id)"
                    ),
                    hints={"target_db": "default"},
                ),
            ],
        ),
    ]
