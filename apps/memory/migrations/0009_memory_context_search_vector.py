from django.db import migrations, models

# Keep in step with apps.memory.models.MEMORY_TEXT_SEARCH_CONFIG and the keyword leg of
# apps/memory/selectors/recall/keyword.py (weights: A = the memory's text, B = its context).
ADD_SEARCH_VECTOR = """
ALTER TABLE memory_memory ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, text), 'A')
    || setweight(to_tsvector('english'::regconfig, context), 'B')
) STORED
"""


class Migration(migrations.Migration):
    """Keyword recall: an optional retrieval ``context`` per memory and a stored tsvector.

    ``context`` is text that situates a memory (neighbouring turns, a date, a title): it is
    keyword-indexed beside ``text`` at a lower weight, but is not the memory itself.

    ``search_vector`` is a stored generated column in raw SQL, invisible to the ORM on
    purpose: no queryset ever loads it (only recall's hand-built statements read it), and the
    bulk loaders that derive their column list from the model never try to write it.

    WARNING: adding a stored generated column rewrites the table under an ACCESS EXCLUSIVE
    lock (minutes at millions of rows). The GIN index follows in 0010, CONCURRENTLY.
    """

    dependencies = [("memory", "0008_reembed_run")]

    operations = [
        # The OLTP statement timeout (30 s) would cancel the rewrite of a large table; the
        # lift is local to this migration's transaction.
        migrations.RunSQL(
            "SET LOCAL statement_timeout = 0",
            reverse_sql="SET LOCAL statement_timeout = 0",
            hints={"target_db": "default"},
        ),
        migrations.AddField(
            model_name="memory",
            name="context",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.RunSQL(
            ADD_SEARCH_VECTOR,
            reverse_sql="ALTER TABLE memory_memory DROP COLUMN IF EXISTS search_vector",
            hints={"target_db": "default"},
        ),
    ]
