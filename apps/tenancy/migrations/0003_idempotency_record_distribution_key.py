from django.db import migrations

from apps.core.migrations._distribution_keys import primary_key_with_tenant


class Migration(migrations.Migration):
    """Idempotency records are keyed by (id, tenant_id), so a database sharded by tenant can
    check the key inside one tenant's shard (apps/core/db/distribution.py)."""

    atomic = False
    dependencies = [("tenancy", "0002_idempotency_record")]

    operations = [*primary_key_with_tenant(table="tenancy_idempotencyrecord")]
