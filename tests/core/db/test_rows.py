"""Model instances built from hand-selected rows (apps/core/db/rows.py)."""

import pytest
from django.db.models.signals import post_init

from apps.core.db.rows import instances_are_plain, model_from_row
from apps.memory.models import Memory
from tests.memory.factories import memory_row

pytestmark = pytest.mark.django_db

# Left out of the row, as recall leaves the vector out: deferred on the instance.
DEFERRED_FIELDS = ("embedding", "derived_context")


def _row(memory):
    fields = [f for f in Memory._meta.concrete_fields if f.name not in DEFERRED_FIELDS]
    return [f.attname for f in fields], [getattr(memory, f.attname) for f in fields]


def _fields(instance):
    return {key: value for key, value in vars(instance).items() if key != "_state"}


def test_a_plain_model_is_built_as_from_db_builds_it(tenant):
    memory = memory_row(tenant, "a", "tea in the garden", tags=["home"], metadata={"k": 1})
    attnames, values = _row(memory)
    expected = Memory.from_db("default", attnames, values)

    built = model_from_row(Memory, using="default", attnames=attnames, values=values, plain=True)

    assert instances_are_plain(Memory) is True
    assert type(built) is Memory
    assert _fields(built) == _fields(expected)
    assert list(_fields(built)) == list(_fields(expected))
    assert (built._state.adding, built._state.db) == (False, "default")
    deferred = set(DEFERRED_FIELDS)
    assert built.get_deferred_fields() == expected.get_deferred_fields() == deferred
    assert built.tenant == tenant
    assert built.pk == memory.pk


def test_a_model_with_an_init_receiver_goes_through_from_db(tenant):
    memory = memory_row(tenant, "a", "kayak on friday")
    attnames, values = _row(memory)
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(receiver, sender=Memory)
    try:
        plain = instances_are_plain(Memory)
        built = model_from_row(
            Memory, using="default", attnames=attnames, values=values, plain=plain
        )
    finally:
        post_init.disconnect(receiver, sender=Memory)

    assert plain is False
    assert seen == [built]
    assert built.pk == memory.pk
