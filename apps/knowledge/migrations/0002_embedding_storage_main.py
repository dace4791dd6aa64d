from django.db import migrations


class Migration(migrations.Migration):
    """Keep vectors inline in the heap row (STORAGE MAIN) rather than out-of-line in TOAST, so
    the exact scan of a tenant's articles reads each vector without a second lookup."""

    dependencies = [("knowledge", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE knowledge_article ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE knowledge_article ALTER COLUMN embedding SET STORAGE EXTERNAL",
            hints={"target_db": "default"},
        ),
    ]
