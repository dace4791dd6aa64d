"""Commands that delete or revoke ask first: ``--yes`` (``--no-input``) answers for the
operator, and without a terminal they refuse and change nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command, get_commands, load_command_class
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.memory.models import Memory
from apps.tenancy.models import ApiKey, ApiKeyRole
from apps.tenancy.services import api_key_create
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

#: Every Engram command that deletes rows or revokes access.
DESTRUCTIVE = {"erase_subject", "erase_tenant", "memory_forget", "revoke_api_key"}


class Terminal(StringIO):
    """A stdin an operator types into."""

    @override
    def isatty(self) -> bool:
        return True


def test_exactly_the_deleting_commands_ask_first():
    destructive = set()
    for name, app in get_commands().items():
        if isinstance(app, str) and app.startswith(("apps.", "lab")):
            command = load_command_class(app, name)
            if isinstance(command, EngramCommand) and command.destructive:
                destructive.add(name)

    assert destructive == DESTRUCTIVE


def _world(tenant):
    memory = remember(tenant, "planner", "The user prefers tabs.", embed=False)
    key = api_key_create(tenant=tenant, role=ApiKeyRole.USER).api_key
    return memory, key


def _argv(name, tenant, memory, key):
    return {
        "erase_subject": ["erase_subject", "--tenant", tenant.slug, "--subject", "planner"],
        "erase_tenant": ["erase_tenant", "--tenant", tenant.slug],
        "memory_forget": ["memory_forget", "--tenant", tenant.slug, str(memory.pk)],
        "revoke_api_key": ["revoke_api_key", key.prefix],
    }[name]


def _changed(name, memory, key) -> bool:
    if name == "revoke_api_key":
        return ApiKey.objects.get(pk=key.pk).revoked_at is not None
    return not Memory.objects.filter(pk=memory.pk).exists()


def _call(argv, stdin):
    out, err = StringIO(), StringIO()
    call_command(*argv, stdout=out, stderr=err, stdin=stdin)
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
def test_without_a_terminal_it_refuses_and_changes_nothing(name, tenant):
    memory, key = _world(tenant)

    with pytest.raises(CommandFailed) as refused:
        _call(_argv(name, tenant, memory, key), StringIO(""))

    assert refused.value.code == "confirmation_required"
    assert "pass --yes" in refused.value.message
    assert _changed(name, memory, key) is False


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
def test_an_answer_other_than_yes_changes_nothing(name, tenant):
    memory, key = _world(tenant)

    with pytest.raises(CommandFailed) as refused:
        _call(_argv(name, tenant, memory, key), Terminal("y\n"))

    assert refused.value.code == "not_confirmed"
    assert _changed(name, memory, key) is False


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
def test_yes_at_the_prompt_goes_ahead(name, tenant):
    memory, key = _world(tenant)

    _, prompt = _call(_argv(name, tenant, memory, key), Terminal("yes\n"))

    assert "cannot be undone" in prompt
    assert prompt.endswith("Type 'yes' to continue: ")
    assert _changed(name, memory, key) is True


@pytest.mark.parametrize("flag", ["--yes", "--no-input", "--noinput"])
@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
def test_the_flag_answers_for_the_operator(name, flag, tenant):
    memory, key = _world(tenant)

    out, prompt = _call([*_argv(name, tenant, memory, key), flag, "--json"], StringIO(""))

    assert prompt == ""
    assert json.loads(out)
    assert _changed(name, memory, key) is True


def test_the_erasure_prompt_shows_what_a_dry_run_counts(tenant):
    memory, key = _world(tenant)

    err = StringIO()
    with pytest.raises(CommandFailed):
        call_command(
            *_argv("erase_subject", tenant, memory, key), stderr=err, stdin=Terminal("no\n")
        )

    assert err.getvalue().startswith(
        f"Erase every row of subject 'planner' of tenant {tenant.slug} for good (1 memories"
    )


def test_a_dry_run_asks_nothing(tenant):
    memory, key = _world(tenant)

    out, prompt = _call(
        [*_argv("erase_tenant", tenant, memory, key), "--dry-run", "--json"], StringIO("")
    )

    assert prompt == ""
    assert json.loads(out)["counts"]["memories"] == 1
    assert _changed("erase_tenant", memory, key) is False
