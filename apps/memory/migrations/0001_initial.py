import uuid

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import pgvector.django.vector
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("core", "0001_extensions"),
        ("projects", "0001_initial"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Memory",
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
                ("text", models.TextField()),
                (
                    "embedding",
                    pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True),
                ),
                ("embedding_content_hash", models.CharField(max_length=64)),
                ("embedded_at", models.DateTimeField(blank=True, null=True)),
                ("confidence", models.FloatField(default=1.0)),
                (
                    "source",
                    models.CharField(
                        choices=[("explicit", "Explicit"), ("promoted", "Promoted")],
                        default="explicit",
                        max_length=16,
                    ),
                ),
                ("source_session_id", models.CharField(blank=True, default="", max_length=200)),
                (
                    "tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64),
                        blank=True,
                        default=list,
                        size=None,
                    ),
                ),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("superseded_at", models.DateTimeField(blank=True, null=True)),
                ("recall_count", models.PositiveIntegerField(default=0)),
                ("last_recalled_at", models.DateTimeField(blank=True, null=True)),
                ("graduated_at", models.DateTimeField(blank=True, null=True)),
                (
                    "project",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="projects.project",
                    ),
                ),
                (
                    "superseded_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memory.memory",
                    ),
                ),
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
                    models.Index(
                        fields=["tenant", "subject_id", "created_at"],
                        name="memory_scope_created_idx",
                    ),
                    django.contrib.postgres.indexes.GinIndex(
                        django.contrib.postgres.indexes.OpClass("text", name="gin_trgm_ops"),
                        name="memory_text_trgm_idx",
                    ),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("source__in", ["explicit", "promoted"])),
                        name="memory_source_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("confidence__gte", 0), ("confidence__lte", 1)),
                        name="memory_confidence_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("text", ""), _negated=True),
                        name="memory_text_not_empty",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("source", "promoted")),
                        fields=("tenant", "subject_id", "embedding_content_hash"),
                        name="memory_promoted_content_hash_uniq",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="SessionMemory",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("seq", models.BigAutoField(primary_key=True, serialize=False)),
                ("subject_id", models.CharField(max_length=200)),
                ("session_id", models.CharField(max_length=200)),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("user", "User"),
                            ("assistant", "Assistant"),
                            ("system", "System"),
                            ("fact", "Fact"),
                        ],
                        max_length=16,
                    ),
                ),
                ("content", models.TextField()),
                ("metadata", models.JSONField(blank=True, default=dict)),
                ("expires_at", models.DateTimeField()),
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
                    models.Index(
                        fields=["tenant", "subject_id", "session_id", "seq"],
                        name="session_scope_seq_idx",
                    ),
                    models.Index(fields=["expires_at"], name="session_expires_at_idx"),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("role__in", ["user", "assistant", "system", "fact"])),
                        name="session_role_valid",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="SessionPromotion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("subject_id", models.CharField(max_length=200)),
                ("session_id", models.CharField(max_length=200)),
                ("content_hash", models.CharField(max_length=64)),
                ("promoted_count", models.PositiveIntegerField(default=0)),
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
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "subject_id", "session_id"), name="session_promotion_uniq"
                    )
                ],
            },
        ),
    ]
