"""Valid time on every long-term memory, and what a change of value records.

* ``valid_from`` / ``valid_to``: when the fact became true and stopped being true, beside the
  transaction time (``created_at``). ``valid_from`` is added nullable here, so adding it is a
  catalogue change only; 0029 fills it for existing rows in batches and 0030 makes it NOT NULL
  without a long lock.
* ``supersedes`` / ``supersede_reason``: on a row that replaced others, which and why.
* ``conflicts_with``: live rows stating another value for the same thing, undecided.

The three new NOT NULL columns take a constant database default, which Postgres stores in the
catalogue instead of rewriting the table.

``valid_from`` defaults to ``occurred_at``. A column default cannot name another column, so a
BEFORE INSERT trigger does it, for any insert that leaves it NULL: a bulk COPY, a writer that
predates the column during a rolling deploy. The services set it themselves, so the trigger's
WHEN clause keeps it from being called on their inserts.
"""

import django.contrib.postgres.fields
from django.db import migrations, models

FORWARD = """
CREATE FUNCTION memory_valid_from_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.valid_from := NEW.occurred_at;
    RETURN NEW;
END
$$;

CREATE TRIGGER memory_valid_from_default BEFORE INSERT ON memory_memory
    FOR EACH ROW WHEN (NEW.valid_from IS NULL) EXECUTE FUNCTION memory_valid_from_default();
"""

REVERSE = """
DROP TRIGGER IF EXISTS memory_valid_from_default ON memory_memory;
DROP FUNCTION IF EXISTS memory_valid_from_default();
"""


def _uuid_array(**kwargs: object) -> django.contrib.postgres.fields.ArrayField:
    return django.contrib.postgres.fields.ArrayField(
        base_field=models.UUIDField(),
        blank=True,
        db_default=models.Value([]),
        default=list,
        size=None,
        **kwargs,
    )


class Migration(migrations.Migration):
    dependencies = [("memory", "0027_memory_scope_usage_superseded")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="valid_from",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="valid_to",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(model_name="memory", name="supersedes", field=_uuid_array()),
        migrations.AddField(
            model_name="memory",
            name="supersede_reason",
            field=models.CharField(blank=True, db_default="", default="", max_length=100),
        ),
        migrations.AddField(model_name="memory", name="conflicts_with", field=_uuid_array()),
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
