import django.contrib.postgres.fields
import django.db.models.functions.datetime
from django.db import migrations, models


class Migration(migrations.Migration):
    """Event time on turns and memories, and promotion provenance (turn seqs, compiler).

    Rows written before this migration happened when they were written: their ``occurred_at``
    is set to ``created_at``.
    """

    dependencies = [("memory", "0010_memory_search_vector_gin_idx")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="compiler",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddField(
            model_name="memory",
            name="occurred_at",
            field=models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
        ),
        migrations.AddField(
            model_name="memory",
            name="source_turn_seqs",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.BigIntegerField(), blank=True, default=list, size=None
            ),
        ),
        migrations.AddField(
            model_name="sessionmemory",
            name="occurred_at",
            field=models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
        ),
        migrations.RunSQL(
            "UPDATE memory_memory SET occurred_at = created_at",
            reverse_sql=migrations.RunSQL.noop,
            hints={"target_db": "default"},
        ),
        migrations.RunSQL(
            "UPDATE memory_sessionmemory SET occurred_at = created_at",
            reverse_sql=migrations.RunSQL.noop,
            hints={"target_db": "default"},
        ),
    ]
