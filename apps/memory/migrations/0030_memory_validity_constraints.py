"""``valid_from`` NOT NULL and ``valid_to >= valid_from``, without a long lock.

A plain SET NOT NULL or ADD CONSTRAINT checks every row under an ACCESS EXCLUSIVE lock. Here
each check is added NOT VALID (no scan) and validated apart, which takes only a SHARE UPDATE
EXCLUSIVE lock (reads and writes go on); Postgres then sets NOT NULL without a scan because a
valid CHECK already proves it, and the helper check is dropped. The ordering check stays.
Each statement commits on its own (non-atomic), so no lock outlives its statement.
"""

from django.db import migrations, models

NOT_NULL_CHECK = "memory_valid_from_not_null"
ORDERED = "memory_validity_ordered"

FORWARD = [
    f"ALTER TABLE memory_memory ADD CONSTRAINT {NOT_NULL_CHECK} "
    "CHECK (valid_from IS NOT NULL) NOT VALID",
    f"ALTER TABLE memory_memory VALIDATE CONSTRAINT {NOT_NULL_CHECK}",
    "ALTER TABLE memory_memory ALTER COLUMN valid_from SET NOT NULL",
    f"ALTER TABLE memory_memory DROP CONSTRAINT {NOT_NULL_CHECK}",
    f"ALTER TABLE memory_memory ADD CONSTRAINT {ORDERED} "
    "CHECK (valid_to IS NULL OR valid_to >= valid_from) NOT VALID",
    f"ALTER TABLE memory_memory VALIDATE CONSTRAINT {ORDERED}",
]

REVERSE = [
    f"ALTER TABLE memory_memory DROP CONSTRAINT IF EXISTS {ORDERED}",
    "ALTER TABLE memory_memory ALTER COLUMN valid_from DROP NOT NULL",
]


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory", "0029_memory_validity_backfill")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    [(statement, None) for statement in FORWARD],
                    reverse_sql=[(statement, None) for statement in REVERSE],
                    hints={"target_db": "default"},
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="memory", name="valid_from", field=models.DateTimeField()
                ),
                migrations.AddConstraint(
                    model_name="memory",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("valid_to__isnull", True))
                        | models.Q(("valid_to__gte", models.F("valid_from"))),
                        name=ORDERED,
                    ),
                ),
            ],
        ),
    ]
