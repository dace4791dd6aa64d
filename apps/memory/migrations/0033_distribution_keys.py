from django.db import migrations

from apps.core.migrations._distribution_keys import (
    foreign_key_with_tenant,
    primary_key_with_tenant,
)


class Migration(migrations.Migration):
    """The memory app's tables are keyed by (<key>, tenant_id), and each relation from a memory
    (to its project, its successor, the article it graduated into) and from a graduation
    deferral is a (tenant_id, …) key (apps/core/db/distribution.py). Migration 0032 dropped the
    one-column keys. The embedding wake, the postings and the usage counts were keyed by the
    tenant already."""

    atomic = False
    dependencies = [
        ("memory", "0032_distribution_foreign_keys_state"),
        ("knowledge", "0008_distribution_keys"),
        ("projects", "0002_project_distribution_key"),
    ]

    operations = [
        *primary_key_with_tenant(table="memory_memory"),
        *primary_key_with_tenant(table="memory_sessionmemory", key="seq"),
        *primary_key_with_tenant(table="memory_sessionpromotion"),
        *primary_key_with_tenant(table="memory_promotionjob"),
        *primary_key_with_tenant(table="memory_memorytombstone"),
        *primary_key_with_tenant(table="memory_graduationdeferral", key="memory_id"),
        *foreign_key_with_tenant(
            table="memory_memory",
            column="project_id",
            target="projects_project",
            name="memory_memory_project_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="memory_memory",
            column="superseded_by_id",
            target="memory_memory",
            name="memory_memory_superseded_by_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="memory_memory",
            column="graduated_article_id",
            target="knowledge_article",
            name="memory_memory_graduated_article_tenant_fk",
        ),
        *foreign_key_with_tenant(
            table="memory_graduationdeferral",
            column="memory_id",
            target="memory_memory",
            name="memory_graduationdeferral_memory_tenant_fk",
        ),
    ]
