"""``profile_history_eval`` end to end: a short history through the session tier and
promotion, every question recalled, the figures counted from the hits, the tenant removed."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory, SessionMemory
from apps.tenancy.models import Tenant
from lab.profile_history import DEFAULT_PATH, load_history, sessions

pytestmark = pytest.mark.django_db

HISTORY = {
    "days": 9,
    "every": 3,
    "filler": ["I had a long meeting with the design team today.", "I watched a documentary."],
    "replies": ["Got it."],
    "events": {
        "1": ["I'm a nurse at St. Luke's hospital."],
        "7": ["Big news: I left the hospital and now work as a data analyst at Globex."],
    },
    "questions": [
        {
            "question": "What is the user's current occupation?",
            "now": ["globex"],
            "then": ["nurse"],
        }
    ],
}


def _run(path) -> dict[str, Any]:
    out = StringIO()
    call_command("profile_history_eval", "--history", str(path), "--json", stdout=out)
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_a_session_every_few_days_and_on_each_event_day(tmp_path):
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY))

    found = sessions(load_history(path))

    # Days 0, 3 and 6, and the event days 1 and 7; each remark answered.
    assert len(found) == 5
    assert all(len(turns) % 2 == 0 for _when, turns in found)
    assert any("Globex" in turn for _when, turns in found for turn in turns)


def test_the_history_is_promoted_and_asked_then_removed(tmp_path):
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY))

    data = _run(path)

    assert (data["sessions"], data["questions"]) == (5, 1)
    (asked,) = data["per_question"]
    # The job change retired the nurse: only the current job can be among the hits.
    assert asked["stale_rank"] is None
    assert asked["current_rank"] is not None
    assert data["current_first"] == int(asked["current_rank"] == 0)
    assert not Tenant.objects.filter(slug__startswith="profile-history-").exists()
    assert not Memory.objects.exists()
    assert not SessionMemory.objects.exists()


def test_a_missing_history_is_refused(tmp_path):
    with pytest.raises(CommandError, match="no history"):
        call_command("profile_history_eval", "--history", str(tmp_path / "none.json"))


@pytest.mark.parametrize(
    "path",
    sorted(DEFAULT_PATH.parent.glob("profile_history*.json")),
    ids=lambda path: path.stem,
)
def test_every_lab_history_reads(path):
    history = load_history(path)

    assert history.questions
    assert all(question.now for question in history.questions)
    assert sessions(history)
