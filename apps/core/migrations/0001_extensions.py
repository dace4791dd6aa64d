from django.contrib.postgres.operations import CreateExtension
from django.db import migrations


class Migration(migrations.Migration):
    """pgvector for embeddings, pg_trgm for the scoped text fallback."""

    initial = True
    dependencies: list[tuple[str, str]] = []
    operations = [
        CreateExtension("vector"),
        CreateExtension("pg_trgm"),
    ]
