from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

VECTORS_INDEX = "memory_live_scope_vectors_model_idx"
OLD_VECTORS_INDEX = "memory_live_scope_vectors_idx"
MODEL_INDEX = "memory_embedding_model_idx"
# As 0006: a btree tuple holds at most 2,704 bytes; the fingerprint takes 17 more.
MAX_DIMENSIONS = 600

VECTORS_DEFINITION = (
    "ON memory_memory (tenant_id, subject_id, project_id) "
    "INCLUDE (id, embedding, embedding_model) "
    "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL"
)
OLD_VECTORS_DEFINITION = (
    "ON memory_memory (tenant_id, subject_id, project_id) INCLUDE (id, embedding) "
    "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL"
)


def _dimensions(connection: BaseDatabaseWrapper) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = 'memory_memory'::regclass AND attname = 'embedding'"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else -1


def forward(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if 0 < _dimensions(schema_editor.connection) <= MAX_DIMENSIONS:
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {VECTORS_INDEX} {VECTORS_DEFINITION}"
        )
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {OLD_VECTORS_INDEX}")


def backward(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if 0 < _dimensions(schema_editor.connection) <= MAX_DIMENSIONS:
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {OLD_VECTORS_INDEX} {OLD_VECTORS_DEFINITION}"
        )
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {VECTORS_INDEX}")


class Migration(migrations.Migration):
    """Two indexes for the fingerprint, built CONCURRENTLY so writes continue.

    * The covering index of recall's exact scan (0006) now includes ``embedding_model`` too,
      since the vector leg ranks only the rows of the query's model: without it, that filter
      would send the index-only scan to the heap for every row. Built, then the old one
      dropped (a little more than one covering index's space while both exist).
    * ``memory_embedding_model_idx``, ``(tenant_id, embedding_model, created_at, id)`` over the
      embedded rows: the background migration finds a tenant's rows of another model oldest
      first, and its progress is counted, without reading the tenant's other rows. Narrow
      (~60 bytes a row); a recall bump changes none of its columns, so it keeps its HOT
      updates.

    Raw SQL like 0003 and 0006: the model's Meta declares neither.
    """

    atomic = False
    dependencies = [("memory", "0035_memory_embedding_model_backfill")]

    operations = [
        migrations.RunPython(forward, backward, hints={"target_db": "default"}),
        migrations.RunSQL(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {MODEL_INDEX} "
            "ON memory_memory (tenant_id, embedding_model, created_at, id) "
            "WHERE embedding IS NOT NULL",
            reverse_sql=f"DROP INDEX CONCURRENTLY IF EXISTS {MODEL_INDEX}",
            hints={"target_db": "default"},
        ),
    ]
