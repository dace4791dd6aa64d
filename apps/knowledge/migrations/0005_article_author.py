from django.db import migrations, models


class Migration(migrations.Migration):
    """Who wrote each article, for the per-author quota. An article written before the column
    is charged to its owner: every agent's and every graduated article has one (the agent), and
    a curator's unowned article stays blank (only the tenant quota counts it)."""

    dependencies = [("knowledge", "0004_curated_and_scoped_titles")]

    operations = [
        migrations.AddField(
            model_name="article",
            name="author_subject_id",
            field=models.CharField(blank=True, db_default="", default="", max_length=200),
        ),
        migrations.RunSQL(
            "UPDATE knowledge_article SET author_subject_id = owner_agent_id "
            "WHERE owner_agent_id <> ''",
            reverse_sql=migrations.RunSQL.noop,
            hints={"target_db": "default"},
        ),
    ]
