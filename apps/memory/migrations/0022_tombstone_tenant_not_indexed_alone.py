from django.db import migrations

from apps.memory.migrations._tenant_index import drop_tenant_index


class Migration(migrations.Migration):
    """Drop the tombstones' index on tenant_id alone, as 0021 did for memories and session
    turns: every write clears its text's tombstone, and for a tenant newer than the last
    ANALYZE that read went through the bare index, over every agent's tombstones."""

    dependencies = [("memory", "0021_tenant_not_indexed_alone")]

    operations = [
        drop_tenant_index(
            model_name="memorytombstone",
            table="memory_memorytombstone",
            index="memory_memorytombstone_tenant_id_e465020c",
        ),
    ]
