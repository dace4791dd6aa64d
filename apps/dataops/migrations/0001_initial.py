import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):
    """Take over the re-embed run and erasure receipt models from the memory app by state only:
    their tables (created by memory 0008 and 0018) keep their names and rows; nothing runs on
    the database."""

    initial = True

    dependencies = [
        ('tenancy', '0002_idempotency_record'),
        ('memory', '0024_memory_scope_usage'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
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
                        'db_table': 'memory_erasurereceipt',
                    },
                ),
                migrations.CreateModel(
                    name='ReembedRun',
                    fields=[
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('provider', models.CharField(max_length=500)),
                        ('started_at', models.DateTimeField()),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('memories_embedded', models.PositiveIntegerField(default=0)),
                        ('articles_embedded', models.PositiveIntegerField(default=0)),
                        ('last_error', models.CharField(blank=True, default='', max_length=500)),
                        ('tenant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.tenant')),
                    ],
                    options={
                        'db_table': 'memory_reembedrun',
                        'constraints': [models.UniqueConstraint(condition=models.Q(('finished_at__isnull', True)), fields=('tenant',), name='reembed_run_one_open_per_tenant')],
                    },
                ),
            ],
        ),
    ]
