import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge', '0003_knowledge_published_hnsw_idx'),
        ('memory', '0006_memory_live_scope_vectors_idx'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='graduated_article',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.article'),
        ),
        migrations.AddField(
            model_name='memory',
            name='graduated_global',
            field=models.BooleanField(default=False),
        ),
    ]
