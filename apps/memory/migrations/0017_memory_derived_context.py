from django.db import migrations, models
from django.db.models import Q

# Keep in step with apps.memory.models.MEMORY_TEXT_SEARCH_CONFIG and the keyword leg of
# apps/memory/selectors/recall/keyword.py (A = text, B = the client's context, C = the
# context the service derived).
SEARCH_VECTOR = """
ALTER TABLE memory_memory DROP COLUMN IF EXISTS search_vector;
ALTER TABLE memory_memory ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, text), 'A')
    || setweight(to_tsvector('english'::regconfig, context), 'B')
    || setweight(to_tsvector('english'::regconfig, derived_context), 'C')
) STORED;
CREATE INDEX IF NOT EXISTS memory_search_vector_gin_idx ON memory_memory USING gin (search_vector);
"""
PREVIOUS_SEARCH_VECTOR = """
ALTER TABLE memory_memory DROP COLUMN IF EXISTS search_vector;
ALTER TABLE memory_memory ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, text), 'A')
    || setweight(to_tsvector('english'::regconfig, context), 'B')
) STORED;
CREATE INDEX IF NOT EXISTS memory_search_vector_gin_idx ON memory_memory USING gin (search_vector);
"""


class Migration(migrations.Migration):
    """Service-derived retrieval context: a memory's neighbours in its session
    (apps/memory/services/derived_context.py), keyword-indexed at weight C.

    WARNING: regenerating the stored ``search_vector`` rewrites the table under an ACCESS
    EXCLUSIVE lock and rebuilds its GIN index (minutes at millions of rows), as 0009 did.
    Existing rows get no derived context (their sessions are not re-threaded).
    """

    dependencies = [("memory", "0016_embedding_drain")]

    operations = [
        migrations.RunSQL(
            "SET LOCAL statement_timeout = 0",
            reverse_sql="SET LOCAL statement_timeout = 0",
            hints={"target_db": "default"},
        ),
        migrations.AddField(
            model_name="memory",
            name="derived_context",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.AddField(
            model_name="memory",
            name="context_thread",
            field=models.CharField(blank=True, db_default="", default="", max_length=200),
        ),
        migrations.AddField(
            model_name="memory",
            name="thread_seq",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=~Q(context_thread=""),
                fields=["tenant", "subject_id", "context_thread", "thread_seq"],
                name="memory_thread_seq_idx",
            ),
        ),
        migrations.RunSQL(
            SEARCH_VECTOR, reverse_sql=PREVIOUS_SEARCH_VECTOR, hints={"target_db": "default"}
        ),
    ]
