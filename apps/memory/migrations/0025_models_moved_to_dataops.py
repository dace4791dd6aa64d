from django.db import migrations


class Migration(migrations.Migration):
    """The re-embed run and erasure receipt models now belong to the dataops app (its 0001):
    dropped from this app's state only, so their tables and rows stay."""

    dependencies = [
        ("memory", "0024_memory_scope_usage"),
        ("dataops", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="ErasureReceipt"),
                migrations.DeleteModel(name="ReembedRun"),
            ],
        ),
    ]
