from django.db import migrations


class Migration(migrations.Migration):
    """The partial HNSW index (cosine) over published articles' embeddings, built CONCURRENTLY
    so article writes continue while it builds.

    Raw SQL because the ORM cannot declare a concurrently-built index in ``Meta``. Only the
    approximate (large-tenant) leg of hybrid search uses it: that leg filters on
    ``status = 'published'``, which is exactly this predicate, so the planner may serve it.
    """

    atomic = False
    dependencies = [("knowledge", "0002_embedding_storage_main")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS knowledge_published_embedding_hnsw_idx "
            "ON knowledge_article USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64) "
            "WHERE status = 'published' AND embedding IS NOT NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS knowledge_published_embedding_hnsw_idx",
            hints={"target_db": "default"},
        ),
    ]
