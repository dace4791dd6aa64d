import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Relations between tenant-owned rows stop being one-column foreign keys: migration 0008
    constrains each by (tenant_id, …) instead, which Django cannot declare. A link is unique
    per tenant (its articles are its tenant's, so that is the same rule)."""

    dependencies = [
        ('knowledge', '0006_article_usage'),
        ('projects', '0001_initial'),
        ('tenancy', '0002_idempotency_record'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='articlelink',
            name='knowledge_link_uniq',
        ),
        migrations.AlterField(
            model_name='article',
            name='project',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='projects.project'),
        ),
        migrations.AlterField(
            model_name='articleaccessevent',
            name='article',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge.article'),
        ),
        migrations.AlterField(
            model_name='articlelink',
            name='from_article',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge.article'),
        ),
        migrations.AlterField(
            model_name='articlelink',
            name='to_article',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge.article'),
        ),
        migrations.AddConstraint(
            model_name='articlelink',
            constraint=models.UniqueConstraint(fields=('tenant', 'from_article', 'to_article', 'kind'), name='knowledge_link_uniq'),
        ),
    ]
