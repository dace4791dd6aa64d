from django.db import migrations, models


class Migration(migrations.Migration):
    """``embedding_model`` on articles, as memory 0034 (a catalogue-only NOT NULL column)."""

    dependencies = [("knowledge", "0008_distribution_keys")]

    operations = [
        migrations.AddField(
            model_name="article",
            name="embedding_model",
            field=models.CharField(blank=True, db_default="", default="", max_length=16),
        ),
    ]
