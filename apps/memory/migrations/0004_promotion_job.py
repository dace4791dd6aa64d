import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_memories_live_embedding_hnsw_idx"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="PromotionJob",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("subject_id", models.CharField(max_length=200)),
                ("session_id", models.CharField(max_length=200)),
                (
                    "trigger",
                    models.CharField(
                        choices=[("explicit", "Explicit"), ("sweep", "Sweep")], max_length=16
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("completed", "Completed"),
                            ("skipped", "Skipped"),
                            ("failed", "Failed"),
                            ("dropped", "Dropped"),
                        ],
                        default="queued",
                        max_length=16,
                    ),
                ),
                ("outcome", models.JSONField(blank=True, default=dict)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenancy.tenant",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["tenant", "created_at"], name="promotion_job_budget_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status__in", ("queued", "running"))),
                        fields=("tenant", "subject_id", "session_id"),
                        name="promotion_job_in_flight_uniq",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            (
                                "status__in",
                                ["queued", "running", "completed", "skipped", "failed", "dropped"],
                            )
                        ),
                        name="promotion_job_status_valid",
                    ),
                ],
            },
        ),
    ]
