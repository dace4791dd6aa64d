"""Leave room in each memory page for a recall bump to rewrite its row in place.

A recall bump (``recall_count``, ``last_recalled_at``) changes no indexed column, so Postgres
can write the new row version on the same page without touching any index (a HOT update),
if the page has room for it. A memory row is ~2 KB, its vector inline (migration 0019), so a
full page has none: every bump inserted a new entry into each of the table's indexes, the HNSW
graph among them. With pages filled to 70 % every bump stays in place, at a small fraction of
the time and WAL (docs/benchmarks/memory-bench.md, "Recall bumps in place"). The price is heap space: two ~2 KB rows to a page instead of three
or four. Pages written before this migration keep their layout until rewritten.
"""

from django.db import migrations

from apps.memory.migrations._table_option import set_table_option

#: Percent of a heap page that inserts may fill; the rest is kept for updates in place.
FILLFACTOR = 70


class Migration(migrations.Migration):
    dependencies = [("memory", "0022_tombstone_tenant_not_indexed_alone")]

    operations = [
        set_table_option(table="memory_memory", option="fillfactor", value=FILLFACTOR),
    ]
