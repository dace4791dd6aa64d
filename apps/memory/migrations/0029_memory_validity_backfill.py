"""Fill the valid time of the rows written before 0028, in batches, each its own transaction.

* ``valid_from = occurred_at`` (the default every writer now applies);
* a superseded row's validity ends where its successor's begins (never before its own start:
  an empty interval is a correction), and the successor records which rows it replaced and
  why: ``paraphrase`` for a promoted successor (only promotion supersedes on its own until
  now), ``explicit`` for any other.

Batches walk the primary key, so each one reads only its own rows: a long table is neither
locked nor rescanned, and writes continue between batches. New rows need nothing: the writers
and 0028's trigger set ``valid_from``; the services set the rest on every supersede. Run again
(after an interruption) it resumes where it stopped: every statement skips rows already done.
"""

from django.db import connections, migrations, transaction

BATCH_SIZE = 5000

VALID_FROM = """
UPDATE memory_memory SET valid_from = occurred_at
 WHERE id = ANY(%s::uuid[]) AND valid_from IS NULL
"""

VALID_TO = """
UPDATE memory_memory AS old
   SET valid_to = greatest(coalesce(new.valid_from, new.occurred_at), old.valid_from)
  FROM memory_memory AS new
 WHERE old.id = ANY(%s::uuid[]) AND new.id = old.superseded_by_id AND old.valid_to IS NULL
"""

SUCCESSORS = """
UPDATE memory_memory AS new
   SET supersedes = replaced.ids,
       supersede_reason = CASE WHEN new.source = 'promoted' THEN 'paraphrase' ELSE 'explicit' END
  FROM (SELECT superseded_by_id AS id, array_agg(id ORDER BY id) AS ids
          FROM memory_memory
         WHERE superseded_by_id = ANY(%s::uuid[])
         GROUP BY superseded_by_id) AS replaced
 WHERE new.id = replaced.id AND new.supersedes = '{}'
"""


def _keys(cursor, *, column: str, condition: str):
    """The distinct values of ``column`` among rows matching ``condition``, in batches, in
    order: each batch is one index range read after the last key of the one before."""
    last = None
    while True:
        after = "" if last is None else f" AND {column} > %s"
        cursor.execute(
            f"SELECT DISTINCT {column} FROM memory_memory "  # noqa: S608 - constants only
            f"WHERE {condition}{after} ORDER BY {column} LIMIT %s",
            ([] if last is None else [last]) + [BATCH_SIZE],
        )
        keys = [row[0] for row in cursor.fetchall()]
        if not keys:
            return
        yield keys
        last = keys[-1]


def backfill(apps, schema_editor) -> None:
    alias = schema_editor.connection.alias
    connection = connections[alias]
    passes = (
        (VALID_FROM, "id", "TRUE"),
        # After the first pass, every successor's valid_from is set.
        (VALID_TO, "id", "superseded_by_id IS NOT NULL"),
        (SUCCESSORS, "superseded_by_id", "superseded_by_id IS NOT NULL"),
    )
    with connection.cursor() as reader:
        reader.execute("SET statement_timeout = 0")
        for statement, column, condition in passes:
            for keys in _keys(reader, column=column, condition=condition):
                with transaction.atomic(using=alias), connection.cursor() as cursor:
                    cursor.execute(statement, [keys])
        reader.execute("RESET statement_timeout")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory", "0028_memory_validity")]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop, hints={"target_db": "default"}),
    ]
