"""Keep a memory's row, search vector included, in its heap page up to half a page.

Postgres moves a row's large values out to the TOAST table once the row passes ~2 KB. A
memory's 384-d vector alone is 1.5 KB (stored inline, migration 0006), so a conversation turn
with its derived context used to have its ``search_vector`` moved out, and the keyword leg, which
reads the ``search_vector`` of every row that matches a query word, paid a TOAST index lookup
and a chunk fetch per row; inline, the statement runs about a third faster (docs/memory.md,
"Keyword latency"). A row over the new threshold
still compresses and moves its largest values out first. Rows written before this migration
keep their layout until they are next updated.
"""

from django.db import migrations

from apps.memory.migrations._table_option import set_table_option

#: Bytes; half of an 8 KB page, so a heap page still holds at least two rows.
TOAST_TUPLE_TARGET = 4080


class Migration(migrations.Migration):
    dependencies = [("memory", "0018_erasure_receipt")]

    operations = [
        set_table_option(
            table="memory_memory", option="toast_tuple_target", value=TOAST_TUPLE_TARGET
        ),
    ]
