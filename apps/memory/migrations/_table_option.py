"""Shared by migrations 0019 and 0023 (the loader skips modules whose names start with "_")."""

from django.db import migrations


def set_table_option(*, table: str, option: str, value: int) -> migrations.RunSQL:
    """Set one storage parameter of ``table``; reversing it restores Postgres' default.

    Storage parameters apply to rows and pages written afterwards; existing ones keep their
    layout until rewritten."""
    return migrations.RunSQL(
        f"ALTER TABLE {table} SET ({option} = {value})",
        reverse_sql=f"ALTER TABLE {table} RESET ({option})",
    )
