"""``everyday_change_eval`` end to end: each case written and recalled through the services,
its figures counted from what recall and the detector did, the tenant removed after."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory
from apps.tenancy.models import Tenant
from lab import everyday_changes

pytestmark = pytest.mark.django_db

CASES = {
    "changes": [
        {
            "old": "The user lives in Berlin.",
            "new": "The user moved to Munich last month.",
            "question": "Where does the user live?",
        },
        {
            "old": "Carol's email is carol@old.example.com.",
            "new": "Carol changed her email to carol@new.example.com.",
            "question": "What is Carol's email address?",
        },
    ],
    "unchanged": [{"old": "The user likes tea.", "new": "The user also likes coffee."}],
}


def _run(path) -> dict[str, Any]:
    out = StringIO()
    call_command("everyday_change_eval", "--cases", str(path), "--json", stdout=out)
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_each_change_is_scored_by_what_recall_and_the_detector_did(tmp_path):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(CASES))

    data = _run(path)

    assert (data["changes"], data["unchanged"]) == (2, 1)
    assert [change["retired"] for change in data["per_change"]] == [True, True]
    # The ranking figures count the per-case outcomes (the test embedder ranks them).
    per_change = data["per_change"]
    assert data["newer_first"] == sum(change["newer_first"] for change in per_change)
    assert data["older_first_as_of"] == sum(change["older_first_as_of"] for change in per_change)
    assert data["both"] == sum(
        change["newer_first"] and change["older_first_as_of"] for change in per_change
    )
    assert data["older_first_as_of"] == 2  # the new fact is not valid yet in June
    assert data["unchanged_kept"] == 1
    assert not Tenant.objects.filter(slug__startswith="everyday-changes-").exists()
    assert not Memory.objects.exists()


def test_a_look_alike_the_detector_retired_is_counted_against_it(tmp_path):
    # A real change given as a look-alike: the count must show the retirement.
    path = tmp_path / "cases.json"
    path.write_text(
        json.dumps(
            {
                "changes": [],
                "unchanged": [
                    {"old": "The user lives in Berlin.", "new": "The user moved to Munich."}
                ],
            }
        )
    )

    data = _run(path)

    assert (data["unchanged"], data["unchanged_kept"]) == (1, 0)
    assert data["per_unchanged"][0]["kept"] is False


def test_missing_cases_are_refused(tmp_path):
    with pytest.raises(CommandError, match="no cases"):
        call_command("everyday_change_eval", "--cases", str(tmp_path / "none.json"))


@pytest.mark.parametrize(
    "path",
    sorted(everyday_changes.DEFAULT_PATH.parent.glob("everyday_changes*.json")),
    ids=lambda path: path.stem,
)
def test_every_set_of_the_lab_reads_with_changes_and_look_alikes(path):
    changes, unchanged = everyday_changes.load_cases(path)

    assert changes
    assert unchanged
    assert all(case.old and case.new and case.question for case in changes)
