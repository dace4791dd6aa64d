from django.db import migrations, models

# Jobs that were in flight before the lease existed: a queued job's lease starts at its
# creation, a running job's at its last update (the claim).
BACKFILL_LEASES = """
UPDATE memory_promotionjob SET enqueued_at = created_at WHERE enqueued_at IS NULL;
UPDATE memory_promotionjob SET claimed_at = updated_at, attempts = 1
 WHERE status = 'running' AND claimed_at IS NULL;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0011_occurred_at_provenance"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="promotionjob",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="promotionjob",
            name="claimed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="promotionjob",
            name="enqueued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="promotionjob",
            index=models.Index(
                condition=models.Q(("status__in", ("queued", "running"))),
                fields=["status", "claimed_at"],
                name="promotion_job_in_flight_idx",
            ),
        ),
        migrations.RunSQL(BACKFILL_LEASES, reverse_sql=migrations.RunSQL.noop),
    ]
