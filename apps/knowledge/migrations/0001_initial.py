import uuid

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import django.db.models.functions.text
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
            name="Article",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("title", models.CharField(max_length=300)),
                ("body", models.TextField()),
                (
                    "category",
                    models.CharField(
                        choices=[
                            ("pattern", "Pattern"),
                            ("decision", "Decision"),
                            ("finding", "Finding"),
                            ("reference", "Reference"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "tags",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=64),
                        blank=True,
                        default=list,
                        size=None,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("draft", "Draft"),
                            ("published", "Published"),
                            ("archived", "Archived"),
                        ],
                        default="published",
                        max_length=16,
                    ),
                ),
                (
                    "visibility",
                    models.CharField(
                        choices=[("tenant", "Tenant"), ("owner", "Owner")],
                        default="tenant",
                        max_length=16,
                    ),
                ),
                ("owner_agent_id", models.CharField(blank=True, default="", max_length=200)),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("manual", "Manual"),
                            ("agent", "Agent"),
                            ("graduated", "Graduated"),
                        ],
                        default="manual",
                        max_length=16,
                    ),
                ),
                ("source_memory_id", models.UUIDField(blank=True, null=True)),
                (
                    "embedding",
                    pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True),
                ),
                ("embedding_content_hash", models.CharField(max_length=64)),
                ("embedded_at", models.DateTimeField(blank=True, null=True)),
                (
                    "search_vector",
                    models.GeneratedField(
                        db_persist=True,
                        expression=django.contrib.postgres.search.CombinedSearchVector(
                            django.contrib.postgres.search.SearchVector(
                                "title", config="english", weight="A"
                            ),
                            "||",
                            django.contrib.postgres.search.SearchVector(
                                "body", config="english", weight="B"
                            ),
                            django.contrib.postgres.search.SearchConfig("english"),
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
                ("version", models.PositiveIntegerField(default=1)),
                ("published_at", models.DateTimeField(blank=True, null=True)),
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
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenancy.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ("title", "id"),
            },
        ),
        migrations.CreateModel(
            name="ArticleAccessEvent",
            fields=[
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                (
                    "access_type",
                    models.CharField(
                        choices=[
                            ("surfaced", "Surfaced"),
                            ("opened", "Opened"),
                            ("referenced", "Referenced"),
                        ],
                        max_length=16,
                    ),
                ),
                ("search_id", models.UUIDField(blank=True, null=True)),
                ("api_key_id", models.UUIDField(blank=True, null=True)),
                ("subject_id", models.CharField(blank=True, default="", max_length=200)),
                (
                    "article",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="knowledge.article",
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
        ),
        migrations.CreateModel(
            name="ArticleLink",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("relates_to", "Relates to"),
                            ("supersedes", "Supersedes"),
                            ("potential_conflict", "Potential conflict"),
                        ],
                        max_length=32,
                    ),
                ),
                (
                    "from_article",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="knowledge.article",
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
                (
                    "to_article",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="knowledge.article",
                    ),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="article",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="knowledge_article_fts_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="article",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["tags"], name="knowledge_article_tags_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="article",
            index=models.Index(
                fields=["tenant", "embedding_content_hash"], name="knowledge_article_hash_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="article",
            index=models.Index(
                fields=["tenant", "status", "title"], name="knowledge_article_list_idx"
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.UniqueConstraint(
                models.F("tenant"),
                django.db.models.functions.text.Lower("title"),
                condition=models.Q(("status", "archived"), _negated=True),
                name="knowledge_article_title_uniq",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("category__in", ["pattern", "decision", "finding", "reference"])
                ),
                name="knowledge_article_category_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["draft", "published", "archived"])),
                name="knowledge_article_status_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("visibility__in", ["tenant", "owner"])),
                name="knowledge_article_visibility_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("source__in", ["manual", "agent", "graduated"])),
                name="knowledge_article_source_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("visibility", "owner"), _negated=True),
                    models.Q(("owner_agent_id", ""), _negated=True),
                    _connector="OR",
                ),
                name="knowledge_article_owner_required",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("title", ""), _negated=True),
                name="knowledge_article_title_not_blank",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("body", ""), _negated=True),
                name="knowledge_article_body_not_blank",
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(("version__gte", 1)), name="knowledge_article_version_positive"
            ),
        ),
        migrations.AddConstraint(
            model_name="article",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("status", "published"), _negated=True),
                    ("published_at__isnull", False),
                    _connector="OR",
                ),
                name="knowledge_article_published_at",
            ),
        ),
        migrations.AddIndex(
            model_name="articleaccessevent",
            index=models.Index(
                fields=["tenant", "search_id", "access_type"], name="knowledge_access_search_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="articleaccessevent",
            index=models.Index(
                fields=["tenant", "access_type", "created_at"], name="knowledge_access_window_idx"
            ),
        ),
        migrations.AddConstraint(
            model_name="articleaccessevent",
            constraint=models.CheckConstraint(
                condition=models.Q(("access_type__in", ["surfaced", "opened", "referenced"])),
                name="knowledge_access_type_valid",
            ),
        ),
        migrations.AddIndex(
            model_name="articlelink",
            index=models.Index(fields=["tenant", "to_article"], name="knowledge_link_to_idx"),
        ),
        migrations.AddConstraint(
            model_name="articlelink",
            constraint=models.UniqueConstraint(
                fields=("from_article", "to_article", "kind"), name="knowledge_link_uniq"
            ),
        ),
        migrations.AddConstraint(
            model_name="articlelink",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind__in", ["relates_to", "supersedes", "potential_conflict"])
                ),
                name="knowledge_link_kind_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="articlelink",
            constraint=models.CheckConstraint(
                condition=models.Q(("from_article", models.F("to_article")), _negated=True),
                name="knowledge_link_not_self",
            ),
        ),
    ]
