import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Relations between tenant-owned rows stop being one-column foreign keys: migration 0033
    constrains each by (tenant_id, …) instead, which Django cannot declare."""

    dependencies = [
        ('knowledge', '0007_distribution_foreign_keys_state'),
        ('memory', '0031_memory_tags_gin_idx'),
        ('projects', '0001_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='graduationdeferral',
            name='memory',
            field=models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='memory.memory'),
        ),
        migrations.AlterField(
            model_name='memory',
            name='graduated_article',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.article'),
        ),
        migrations.AlterField(
            model_name='memory',
            name='project',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='projects.project'),
        ),
        migrations.AlterField(
            model_name='memory',
            name='superseded_by',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.memory'),
        ),
    ]
