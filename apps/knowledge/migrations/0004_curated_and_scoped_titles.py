import django.db.models.functions.text
from django.db import migrations, models


def mark_manual_articles_curated(apps, schema_editor):
    # Before the flag, a manual article was one a curator created.
    Article = apps.get_model("knowledge", "Article")
    Article.objects.using(schema_editor.connection.alias).filter(source="manual").update(
        curated=True
    )


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge', '0003_knowledge_published_hnsw_idx'),
        ('projects', '0001_initial'),
        ('tenancy', '0002_idempotency_record'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='article',
            name='knowledge_article_title_uniq',
        ),
        migrations.AddField(
            model_name='article',
            name='curated',
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(
            mark_manual_articles_curated,
            migrations.RunPython.noop,
            hints={"target_db": "default"},
        ),
        migrations.AddConstraint(
            model_name='article',
            constraint=models.UniqueConstraint(models.F('tenant'), django.db.models.functions.text.Lower('title'), condition=models.Q(('status', 'published'), ('visibility', 'tenant')), name='knowledge_article_shared_title_uniq'),
        ),
        migrations.AddConstraint(
            model_name='article',
            constraint=models.UniqueConstraint(models.F('tenant'), models.F('owner_agent_id'), django.db.models.functions.text.Lower('title'), condition=models.Q(('status', 'archived'), _negated=True), name='knowledge_article_owner_title_uniq'),
        ),
    ]
