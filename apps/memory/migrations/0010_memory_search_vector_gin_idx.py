from django.db import migrations


class Migration(migrations.Migration):
    """The GIN index behind keyword recall's ``search_vector @@ tsquery``, built
    CONCURRENTLY so writes continue (own non-atomic migration, like 0003)."""

    atomic = False
    dependencies = [("memory", "0009_memory_context_search_vector")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_search_vector_gin_idx "
            "ON memory_memory USING gin (search_vector)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_search_vector_gin_idx",
            hints={"target_db": "default"},
        ),
    ]
