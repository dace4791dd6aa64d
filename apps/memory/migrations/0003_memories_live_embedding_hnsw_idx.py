from django.db import migrations


class Migration(migrations.Migration):
    """The partial HNSW index over live rows (cosine), built CONCURRENTLY so writes continue.

    Raw SQL because the spec's index name is 32 characters and Django caps Meta index names
    at 30; the index is invisible to the migration state, which is fine: nothing in the ORM
    refers to it by name.
    """

    atomic = False
    dependencies = [("memory", "0002_embedding_storage_main")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_live_embedding_hnsw_idx "
            "ON memory_memory USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64) WHERE superseded_by_id IS NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memories_live_embedding_hnsw_idx",
            hints={"target_db": "default"},
        ),
    ]
