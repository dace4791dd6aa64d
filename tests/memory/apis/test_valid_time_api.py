"""Valid time on the memory APIs: written (``valid_from``), returned on every memory, and read
back at a time (``as_of``) by recall, merged recall and the list, only ever the caller's own."""

import pytest

from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
QUERY = "which city does the user live in"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _embed_all():
    memory_embed_pending(memory_ids=[str(pk) for pk in Memory.objects.values_list("pk", flat=True)])


@pytest.fixture
def moved(agent, other_agent, foreign_agent):
    """Berlin from March, replaced by Lisbon in June; others' rows valid at the same time."""
    berlin = agent.post(
        MEMORY, {"text": "The user lives in Berlin.", "occurred_at": "2024-03-01T00:00:00Z"}
    ).json()["data"]
    lisbon = agent.post(
        MEMORY,
        {
            "text": "The user lives in Lisbon.",
            "occurred_at": "2024-06-20T00:00:00Z",
            "valid_from": "2024-06-01T00:00:00Z",
            "supersedes": berlin["id"],
        },
    ).json()["data"]
    other_agent.post(
        MEMORY, {"text": "The user lives in Madrid.", "occurred_at": "2024-03-01T00:00:00Z"}
    )
    foreign_agent.post(
        MEMORY, {"text": "The user lives in Rome.", "occurred_at": "2024-03-01T00:00:00Z"}
    )
    _embed_all()
    return berlin, lisbon


def test_every_memory_returns_its_valid_time_and_what_it_replaced(agent, moved):
    berlin, lisbon = moved

    assert (berlin["valid_from"], berlin["valid_to"]) == ("2024-03-01T00:00:00Z", None)
    assert (lisbon["valid_from"], lisbon["valid_to"]) == ("2024-06-01T00:00:00Z", None)
    assert (lisbon["supersedes"], lisbon["supersede_reason"]) == ([berlin["id"]], "explicit")
    assert lisbon["conflicts_with"] == []
    history = agent.get(f"{MEMORY}?include_superseded=true").json()["data"]
    old = next(m for m in history if m["id"] == berlin["id"])
    assert (old["valid_to"], old["superseded_by"]) == ("2024-06-01T00:00:00Z", lisbon["id"])


@pytest.mark.parametrize(
    ("_case", "as_of", "expected", "validity"),
    [
        ("spring", "2024-04-01T00:00:00Z", "The user lives in Berlin.", "superseded"),
        ("summer", "2024-07-01T00:00:00Z", "The user lives in Lisbon.", "current"),
        (
            "no_offset_reads_as_utc",
            "2024-04-01T00:00:00",
            "The user lives in Berlin.",
            "superseded",
        ),
    ],
)
def test_recall_as_of_returns_the_callers_fact_that_held_then(
    agent, moved, _case, as_of, expected, validity
):
    response = agent.post(RECALL, {"query": QUERY, "as_of": as_of})

    body = response.json()
    assert response.status_code == 200
    assert [(hit["memory"]["text"], hit["validity"]) for hit in body["data"]] == [
        (expected, validity)
    ]
    assert body["meta"]["as_of"] == as_of.removesuffix("Z") + "Z"


def test_recall_without_as_of_says_each_hit_holds(agent, moved):
    body = agent.post(RECALL, {"query": QUERY}).json()

    assert [(hit["memory"]["text"], hit["validity"]) for hit in body["data"]] == [
        ("The user lives in Lisbon.", "current")
    ]
    assert body["meta"]["as_of"] is None


def test_an_invalid_as_of_is_refused_before_anything_runs(agent, moved, mocker):
    recall = mocker.patch("apps.memory.apis.recall.memory_recall")

    response = agent.post(RECALL, {"query": QUERY, "as_of": "last spring"})

    assert response.status_code == 422
    assert "as_of" in response.json()["error"]["details"]["fields"]
    recall.assert_not_called()


def test_list_as_of_lists_the_callers_facts_that_held_then(agent, moved):
    spring = agent.get(f"{MEMORY}?as_of=2024-04-01T00:00:00Z").json()["data"]
    now = agent.get(MEMORY).json()["data"]

    assert [m["text"] for m in spring] == ["The user lives in Berlin."]
    assert [m["text"] for m in now] == ["The user lives in Lisbon."]


def test_merged_recall_reads_its_memory_half_as_of_and_ledgers_validity(agent, moved):
    berlin, lisbon = moved

    spring = agent.post(MERGED, {"query": QUERY, "as_of": "2024-04-01T00:00:00Z"}).json()
    now = agent.post(MERGED, {"query": QUERY}).json()

    (old,) = [item for item in spring["data"] if item["source"] == "memory"]
    (new,) = [item for item in now["data"] if item["source"] == "memory"]
    assert (old["text"], old["validity"], old["superseded_by"]) == (
        "The user lives in Berlin.",
        "superseded",
        lisbon["id"],
    )
    assert old["valid_to"] == "2024-06-01T00:00:00Z"
    assert (new["text"], new["validity"], new["supersedes"], new["supersede_reason"]) == (
        "The user lives in Lisbon.",
        "current",
        [berlin["id"]],
        "explicit",
    )
    assert (spring["meta"]["as_of"], now["meta"]["as_of"]) == ("2024-04-01T00:00:00Z", None)


def test_a_job_change_written_as_two_facts_is_read_now_and_as_it_stood_then(agent):
    """Two plain writes months apart, an unrelated fact between, no supersede named: the
    service retires the nurse job itself, recall answers with the new job, and as of June with
    the old one, first, ahead of the unrelated fact."""
    for text, when in [
        ("Maria works as a nurse at St. Luke's hospital.", "2025-03-01T00:00:00Z"),
        ("The user works out at the gym on weekends.", "2025-04-01T00:00:00Z"),
        (
            "Maria left the hospital and now works as a data analyst at Globex.",
            "2025-09-01T00:00:00Z",
        ),
    ]:
        assert agent.post(MEMORY, {"text": text, "occurred_at": when}).status_code == 201
    _embed_all()
    question = "Where does Maria work?"

    now = agent.post(RECALL, {"query": question}).json()["data"]
    then = agent.post(RECALL, {"query": question, "as_of": "2025-06-01T00:00:00Z"}).json()["data"]

    assert (now[0]["memory"]["text"], now[0]["validity"]) == (
        "Maria left the hospital and now works as a data analyst at Globex.",
        "current",
    )
    assert "Maria works as a nurse at St. Luke's hospital." not in [
        h["memory"]["text"] for h in now
    ]
    assert [(hit["memory"]["text"], hit["validity"]) for hit in then] == [
        ("Maria works as a nurse at St. Luke's hospital.", "superseded"),
        ("The user works out at the gym on weekends.", "current"),
    ]


def test_a_question_about_what_used_to_be_returns_the_replaced_fact_first(agent, moved):
    berlin, lisbon = moved

    body = agent.post(RECALL, {"query": "which city did the user live in before?"}).json()

    assert [(hit["memory"]["id"], hit["validity"]) for hit in body["data"]] == [
        (berlin["id"], "superseded"),
        (lisbon["id"], "current"),
    ]


def test_merged_recall_returns_the_replaced_fact_for_what_used_to_be(agent, moved):
    berlin, lisbon = moved

    body = agent.post(MERGED, {"query": "which city did the user live in before?"}).json()

    assert {
        (item["id"], item["validity"]) for item in body["data"] if item["source"] == "memory"
    } == {(berlin["id"], "superseded"), (lisbon["id"], "current")}


def test_selling_what_a_memory_said_was_held_retires_it_through_the_api(agent, other_agent):
    """A live agent's two writes, no times sent: the end of the phone the first one named
    retires it (the later write's own time ends its validity), says why, and leaves another
    subject's phone alone."""
    phone = agent.post(MEMORY, {"text": "The user's phone is an iPhone 12."}).json()["data"]
    theirs = other_agent.post(MEMORY, {"text": "The user's phone is an iPhone 12."}).json()["data"]
    sold = agent.post(MEMORY, {"text": "The user sold the iPhone and bought a Pixel 8."}).json()[
        "data"
    ]
    _embed_all()

    old = agent.get(f"{MEMORY}/{phone['id']}").json()["data"]
    new = agent.get(f"{MEMORY}/{sold['id']}").json()["data"]
    now = agent.post(RECALL, {"query": "What phone does the user have?"}).json()["data"]

    assert (old["superseded_by"], old["valid_to"]) == (sold["id"], new["valid_from"])
    assert (new["supersedes"], new["supersede_reason"]) == ([phone["id"]], "changed_value:phone")
    assert [hit["memory"]["id"] for hit in now] == [sold["id"]]
    assert other_agent.get(f"{MEMORY}/{theirs['id']}").json()["data"]["superseded_by"] is None
