from django.db import migrations

from apps.tenancy.migrations._embedding_models import stamp_embedding_models


def backfill(apps, schema_editor) -> None:
    stamp_embedding_models(schema_editor, table="knowledge_article")


class Migration(migrations.Migration):
    """Stamp the articles embedded before 0009 with their tenant's current model, in batches
    (apps/tenancy/migrations/_embedding_models.py)."""

    atomic = False
    dependencies = [("knowledge", "0009_article_embedding_model"), ("tenancy", "0001_initial")]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop, hints={"target_db": "default"}),
    ]
