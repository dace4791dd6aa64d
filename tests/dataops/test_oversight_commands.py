import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory
from apps.tenancy.services import tenant_halt
from tests.memory.helpers import remember


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_memory_list_one_subject_as_json(tenant, other_tenant):
    remember(tenant, "a", "first", embed=False)
    remember(tenant, "a", "second")
    remember(tenant, "b", "other subject")
    remember(other_tenant, "a", "other tenant")

    body = json.loads(_run("memory_list", "--tenant", tenant.slug, "--subject", "a", "--json"))

    assert [row["text"] for row in body["results"]] == ["second", "first"]
    assert [row["embedding_status"] for row in body["results"]] == ["ready", "pending"]
    assert body["meta"] == {"total_count": 2, "limit": 50, "offset": 0}


def test_memory_list_all_subjects(tenant):
    remember(tenant, "a", "a's", embed=False)
    remember(tenant, "b", "b's", embed=False)

    body = json.loads(_run("memory_list", "--tenant", tenant.slug, "--all-subjects", "--json"))

    assert sorted(row["subject_id"] for row in body["results"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("_case", "args", "message"),
    [
        ("neither", ["--tenant", "{slug}"], "exactly one"),
        ("both", ["--tenant", "{slug}", "--subject", "a", "--all-subjects"], "exactly one"),
        ("unknown_tenant", ["--tenant", "nope", "--all-subjects"], "not_found"),
        ("bad_limit", ["--tenant", "{slug}", "--all-subjects", "--limit", "0"], "positive"),
    ],
)
def test_memory_list_rejects_bad_input(tenant, _case, args, message):
    with pytest.raises(CommandError, match=message):
        _run("memory_list", *[arg.format(slug=tenant.slug) for arg in args])


def test_memory_forget_any_subject_even_during_a_halt(tenant):
    memory = remember(tenant, "b", "to forget", embed=False)
    tenant_halt(tenant=tenant)

    body = json.loads(
        _run("memory_forget", "--tenant", tenant.slug, str(memory.pk), "--json", "--yes")
    )

    assert body == {"memory_id": str(memory.pk), "deleted_rows": 1, "articles_deleted": []}
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_memory_forget_refuses_another_tenants_memory(tenant, other_tenant):
    foreign = remember(other_tenant, "a", "foreign", embed=False)

    with pytest.raises(CommandError, match="not_found"):
        _run("memory_forget", "--tenant", tenant.slug, str(foreign.pk))

    assert Memory.objects.filter(pk=foreign.pk).exists()


@pytest.mark.parametrize("memory_id", ["not-a-uuid", "00000000-0000-4000-8000-000000000003"])
def test_memory_forget_bad_or_missing_id_fails(tenant, memory_id):
    with pytest.raises(CommandError):
        _run("memory_forget", "--tenant", tenant.slug, memory_id)
