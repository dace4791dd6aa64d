from django.db import migrations


class Migration(migrations.Migration):
    """Keep vectors inline in the heap row (STORAGE MAIN) rather than out-of-line in TOAST, so
    an exact scan of one subject's rows reads each vector without a second lookup."""

    dependencies = [("memory", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_memory ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE memory_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
            hints={"target_db": "default"},
        ),
    ]
