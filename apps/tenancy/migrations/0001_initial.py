import uuid

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Tenant",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("slug", models.SlugField(max_length=64, unique=True)),
                ("name", models.CharField(max_length=200)),
                ("halted_at", models.DateTimeField(blank=True, null=True)),
                ("halt_reason", models.CharField(blank=True, default="", max_length=500)),
                ("embedding_provider", models.CharField(blank=True, default="", max_length=32)),
                ("embedding_config", models.JSONField(blank=True, default=dict)),
                ("embedding_api_key_encrypted", models.TextField(blank=True, default="")),
                ("llm_provider", models.CharField(blank=True, default="", max_length=32)),
                ("llm_config", models.JSONField(blank=True, default=dict)),
                ("llm_api_key_encrypted", models.TextField(blank=True, default="")),
            ],
            options={
                "ordering": ["slug"],
            },
        ),
        migrations.CreateModel(
            name="ApiKey",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("name", models.CharField(blank=True, default="", max_length=200)),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("agent", "Agent"),
                            ("user", "User"),
                            ("orchestrator", "Orchestrator"),
                            ("superadmin", "Superadmin"),
                        ],
                        max_length=16,
                    ),
                ),
                ("agent_id", models.CharField(blank=True, default="", max_length=200)),
                ("prefix", models.CharField(max_length=16, unique=True)),
                ("secret_hash", models.CharField(max_length=64)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_keys",
                        to="tenancy.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["created_at"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("role", "superadmin"), ("tenant__isnull", True)),
                            models.Q(
                                models.Q(("role", "superadmin"), _negated=True),
                                ("tenant__isnull", False),
                            ),
                            _connector="OR",
                        ),
                        name="api_key_tenant_matches_role",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("role__in", ["agent", "user", "orchestrator", "superadmin"])
                        ),
                        name="api_key_role_valid",
                    ),
                ],
            },
        ),
    ]
