from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

INDEX_NAME = "memory_live_scope_vectors_idx"
# A btree tuple holds at most 2,704 bytes. With the key (tenant, a subject of up to 200
# characters, project) and the id, a float4 vector fits up to ~600 dimensions.
MAX_DIMENSIONS = 600


def _dimensions(schema_editor: BaseDatabaseSchemaEditor) -> int:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = 'memory_memory'::regclass AND attname = 'embedding'"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else -1


def create_index(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if not 0 < _dimensions(schema_editor) <= MAX_DIMENSIONS:
        # Too wide to include: recall's exact scan reads the heap instead (slower, same rows).
        return
    schema_editor.execute(
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX_NAME} "
        "ON memory_memory (tenant_id, subject_id, project_id) INCLUDE (id, embedding) "
        "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL"
    )


def drop_index(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX_NAME}")


class Migration(migrations.Migration):
    """A covering index over one subject's recallable rows *with their vectors*, built
    CONCURRENTLY so writes continue.

    Recall's exact scan ranks (id, distance) for every row of the subject. Read from the
    heap, that is one page per row (rows arrive interleaved across subjects, ~4 to a page);
    read from this index, it is an index-only scan over the subject's own leaf pages, ~4
    rows each and nothing else: at 1M rows a cold query reads a fifth of the pages
    (docs/memory.md). The price is a second copy of each live vector
    (~1.6 KB per row at 384 dimensions) and one more btree insert per embedded write.

    Skipped when the vector is too wide for a btree tuple (> MAX_DIMENSIONS); a later ALTER
    of the column's dimension rebuilds this index and fails loudly if it no longer fits.
    Raw SQL like 0003: the model's Meta does not declare it and nothing refers to it by name.
    """

    atomic = False
    dependencies = [("memory", "0005_memory_live_embedded_scope_idx")]

    operations = [
        migrations.RunPython(create_index, drop_index, hints={"target_db": "default"}),
    ]
