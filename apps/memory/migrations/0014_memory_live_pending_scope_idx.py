from django.db import migrations


class Migration(migrations.Migration):
    """A partial btree over one subject's live rows still waiting for their embedding, built
    CONCURRENTLY so writes continue.

    Keyword recall searches pending rows too (read-your-writes) and counts them
    (``meta.pending_searched``), and BM25's population is the embedded rows (counted through
    0005's index) plus these: each count is an index-only scan of a small index — pending rows
    are few and leave it as soon as they are embedded.

    Raw SQL like 0005; nothing in the ORM refers to the index by name.
    """

    atomic = False
    dependencies = [("memory", "0013_graduation_deferral")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_live_pending_scope_idx "
            "ON memory_memory (tenant_id, subject_id, project_id) "
            "WHERE superseded_by_id IS NULL AND embedding IS NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_live_pending_scope_idx",
            hints={"target_db": "default"},
        ),
    ]
