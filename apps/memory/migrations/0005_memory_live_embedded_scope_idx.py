from django.db import migrations


class Migration(migrations.Migration):
    """A small partial btree over one subject's *recallable* rows (live and embedded), built
    CONCURRENTLY so writes continue.

    Recall decides exact-vs-ANN with a bounded existence check ("is there a row past the
    threshold?"). Through this index that check is an index-only scan of at most
    MEMORY_EXACT_SCAN_MAX_ROWS + 1 narrow entries instead of as many heap visits, and the
    exact scan finds exactly the rows it ranks (superseded and pending rows are not in it).
    `project_id` is a key column so the project partition filter is answered from the index too.

    Raw SQL like 0003 (the model's Meta is not this migration's to edit); nothing in the ORM
    refers to the index by name.
    """

    atomic = False
    dependencies = [("memory", "0004_promotion_job")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_live_embedded_scope_idx "
            "ON memory_memory (tenant_id, subject_id, project_id) "
            "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_live_embedded_scope_idx",
            hints={"target_db": "default"},
        ),
    ]
