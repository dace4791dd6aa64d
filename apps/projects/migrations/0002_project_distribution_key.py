from django.db import migrations

from apps.core.migrations._distribution_keys import primary_key_with_tenant


class Migration(migrations.Migration):
    """Projects are keyed by (id, tenant_id) (apps/core/db/distribution.py). The memories' and
    articles' one-column keys to a project went first (their apps' migrations below); their
    (tenant_id, project_id) keys follow in those apps."""

    atomic = False
    dependencies = [
        ("projects", "0001_initial"),
        ("knowledge", "0007_distribution_foreign_keys_state"),
        ("memory", "0032_distribution_foreign_keys_state"),
    ]

    operations = [*primary_key_with_tenant(table="projects_project")]
