import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The coalesced embedding drain: a wake marker per tenant, each pending row's failed
    provider calls, and a partial btree the drain claims through (a tenant's pending rows,
    never-failed first, oldest first), built CONCURRENTLY so writes continue. Rows leave the
    index when they are embedded, so it stays as small as the backlog."""

    atomic = False

    dependencies = [
        ('memory', '0015_memory_tombstone'),
        ('tenancy', '0002_idempotency_record'),
    ]

    operations = [
        migrations.CreateModel(
            name='EmbeddingWake',
            fields=[
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('tenant', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='tenancy.tenant')),
                ('due_until', models.DateTimeField()),
            ],
            options={
                'abstract': False,
            },
        ),
        migrations.AddField(
            model_name='memory',
            name='embedding_failures',
            field=models.PositiveSmallIntegerField(db_default=0, default=0),
        ),
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_pending_drain_idx "
            "ON memory_memory (tenant_id, embedding_failures, created_at) "
            "WHERE embedding IS NULL",
            reverse_sql="DROP INDEX CONCURRENTLY IF EXISTS memory_pending_drain_idx",
            hints={"target_db": "default"},
        ),
    ]
