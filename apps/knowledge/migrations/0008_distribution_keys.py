from django.db import migrations

from apps.core.migrations._distribution_keys import (
    foreign_key_with_tenant,
    primary_key_with_tenant,
)


class Migration(migrations.Migration):
    """The wiki's tables are keyed by (id, tenant_id), and each relation between them, and to
    a project, is a (tenant_id, …) key (apps/core/db/distribution.py). Migration 0007 dropped
    the one-column keys, and memory 0032 the memories' key to an article."""

    atomic = False
    dependencies = [
        ("knowledge", "0007_distribution_foreign_keys_state"),
        ("memory", "0032_distribution_foreign_keys_state"),
        ("projects", "0002_project_distribution_key"),
    ]

    operations = [
        *primary_key_with_tenant(table="knowledge_article"),
        *primary_key_with_tenant(table="knowledge_articlelink"),
        *primary_key_with_tenant(table="knowledge_articleaccessevent"),
        *foreign_key_with_tenant(
            table="knowledge_article",
            column="project_id",
            target="projects_project",
            name="knowledge_article_project_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="knowledge_articlelink",
            column="from_article_id",
            target="knowledge_article",
            name="knowledge_articlelink_from_article_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="knowledge_articlelink",
            column="to_article_id",
            target="knowledge_article",
            name="knowledge_articlelink_to_article_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="knowledge_articleaccessevent",
            column="article_id",
            target="knowledge_article",
            name="knowledge_articleaccessevent_article_tenant_fk",
        ),
    ]
