from django.db import migrations

from apps.tenancy.migrations._embedding_models import stamp_embedding_models


def backfill(apps, schema_editor) -> None:
    stamp_embedding_models(schema_editor, table="memory_memory")


class Migration(migrations.Migration):
    """Stamp the memories embedded before 0034 with their tenant's current model, in batches,
    each its own transaction (apps/tenancy/migrations/_embedding_models.py)."""

    atomic = False
    dependencies = [("memory", "0034_memory_embedding_model"), ("tenancy", "0001_initial")]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop, hints={"target_db": "default"}),
    ]
