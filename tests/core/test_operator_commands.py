"""Every Engram command speaks the same way: options with help, coded errors (JSON under
``--json``), and ``manage.py help`` listing Engram's commands by Engram's apps."""

from __future__ import annotations

import argparse
import json
from io import StringIO

import pytest
from django.core.management import get_commands, load_command_class

from apps.core.management.base import EngramCommand
from apps.core.management.utility import EngramManagementUtility

#: Engram's own apps: the product's and the measurement lab's commands.
ENGRAM_APPS = ("apps.", "lab")


def _engram_commands() -> dict[str, str]:
    return {
        name: app
        for name, app in get_commands().items()
        if isinstance(app, str) and app.startswith(ENGRAM_APPS)
    }


def _parsers(parser: argparse.ArgumentParser, where: str):
    yield where, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from _parsers(subparser, f"{where} {name}")


def test_engram_has_the_commands_this_test_walks():
    assert {"erase_subject", "revoke_api_key", "schedule", "embedded_postgres"} <= set(
        _engram_commands()
    )


def test_every_option_of_every_engram_command_has_help():
    missing: list[str] = []
    for name, app in sorted(_engram_commands().items()):
        command = load_command_class(app, name)
        for where, parser in _parsers(command.create_parser("manage.py", name), name):
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    continue
                if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                    missing.append(f"{where}: {'/'.join(action.option_strings) or action.dest}")

    assert missing == []


def test_every_engram_command_is_an_engram_command():
    plain = [
        name
        for name, app in _engram_commands().items()
        if not isinstance(load_command_class(app, name), EngramCommand)
    ]

    assert plain == []


@pytest.mark.parametrize(
    ("_case", "argv", "code", "status"),
    [
        pytest.param(
            "unknown_tenant",
            ["memory_stats", "--tenant", "no-such-tenant"],
            "not_found",
            1,
            marks=pytest.mark.django_db,
        ),
        ("bad_argument", ["memory_list", "--limit", "many"], "invalid_arguments", 2),
        ("missing_argument", ["erase_tenant"], "invalid_arguments", 2),
        (
            "command_check",
            ["memory_list", "--tenant", "x", "--all-subjects", "--limit", "0"],
            "invalid_arguments",
            1,
        ),
    ],
)
def test_with_json_a_failure_is_one_json_document_with_a_code(_case, argv, code, status):
    # memory_list checks --limit before it looks the tenant up: no database needed there.
    out, err = StringIO(), StringIO()
    name = argv[0]
    command = load_command_class(_engram_commands()[name], name)
    command.stdout._out = out  # type: ignore[attr-defined]
    command.stderr._out = err  # type: ignore[attr-defined]

    with pytest.raises(SystemExit) as exited:
        command.run_from_argv(["manage.py", *argv, "--json"])

    assert exited.value.code == status
    document = json.loads(out.getvalue())
    assert document["error"]["code"] == code
    assert set(document["error"]) == {"code", "message", "details"}
    assert err.getvalue() == ""


def test_without_json_a_failure_is_one_line_with_its_code():
    err = StringIO()
    command = load_command_class(_engram_commands()["memory_list"], "memory_list")
    command.stderr._out = err  # type: ignore[attr-defined]

    with pytest.raises(SystemExit) as exited:
        command.run_from_argv(
            ["manage.py", "memory_list", "--tenant", "x", "--all-subjects", "--limit", "0"]
        )

    assert exited.value.code == 1
    assert err.getvalue() == "CommandError: invalid_arguments: --limit must be positive.\n"


def _main_help(*argv: str, capsys) -> str:
    EngramManagementUtility(["manage.py", "help", *argv]).execute()
    text: str = capsys.readouterr().out
    return text


def test_help_lists_engrams_commands_under_engrams_apps_only(capsys):
    text = _main_help(capsys=capsys)

    groups = [line.split("]")[0].lstrip("[") for line in text.splitlines() if line.startswith("[")]
    listed = {line.split()[0] for line in text.splitlines() if line.startswith("    ")}
    assert groups == ["tenancy", "dataops", "knowledge", "core", "lab"]
    assert listed == set(_engram_commands())
    assert not {"flush", "createsuperuser", "migrate", "shell"} & listed
    assert "help --all" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_help_all_and_completion_still_list_djangos_commands(capsys):
    every = _main_help("--all", capsys=capsys)
    names = _main_help("--commands", capsys=capsys).split()

    assert "[django]" in every
    assert "flush" in every
    assert {"migrate", "flush", "erase_subject"} <= set(names)
