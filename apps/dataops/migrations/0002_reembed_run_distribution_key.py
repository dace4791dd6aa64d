from django.db import migrations

from apps.core.migrations._distribution_keys import primary_key_with_tenant


class Migration(migrations.Migration):
    """Re-embedding runs are keyed by (id, tenant_id), so a database sharded by tenant can
    check the key inside one tenant's shard (apps/core/db/distribution.py)."""

    atomic = False
    dependencies = [("dataops", "0001_initial")]

    operations = [*primary_key_with_tenant(table="memory_reembedrun")]
