from django.db import migrations

INDEX = "knowledge_article_embedding_model_idx"


class Migration(migrations.Migration):
    """``(tenant_id, embedding_model, created_at, id)`` over the embedded articles, built
    CONCURRENTLY: the background migration finds a tenant's articles of another model oldest
    first, and its progress is counted, as memory 0036's index does for memories. Raw SQL
    like 0003."""

    atomic = False
    dependencies = [("knowledge", "0010_article_embedding_model_backfill")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} "
            "ON knowledge_article (tenant_id, embedding_model, created_at, id) "
            "WHERE embedding IS NOT NULL",
            reverse_sql=f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}",
            hints={"target_db": "default"},
        ),
    ]
