import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0017_memory_derived_context'),
    ]

    operations = [
        migrations.CreateModel(
            name='ErasureReceipt',
            fields=[
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('scope', models.JSONField()),
                ('requested_by', models.CharField(max_length=200)),
                ('counts', models.JSONField()),
                ('verified', models.BooleanField()),
            ],
            options={
                'abstract': False,
            },
        ),
    ]
