from django.db import migrations


class Migration(migrations.Migration):
    """The GIN index behind tag filters (``tags @> …``, ``tags && …``: recall's and the list's
    ``filter``, the list's ``tags``, a LangGraph store's namespace), built CONCURRENTLY so
    writes continue (own non-atomic migration, like 0010). A selective tag filter then reads
    the rows carrying the tag instead of every row of the subject (docs/recall.md,
    "Filters"; docs/benchmarks/recall-filters.md)."""

    atomic = False
    dependencies = [("memory", "0030_memory_validity_constraints")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_tags_gin_idx "
            "ON memory_memory USING gin (tags)",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_tags_gin_idx",
            hints={"target_db": "default"},
        ),
    ]
