"""Session history pages are bounded in turns and in bytes, and paging through them with
``next_offset`` returns every turn once, in order."""

import pytest

from apps.memory.models import SessionMemory
from apps.memory.selectors import session_history
from apps.memory.services import SessionTurnDraft, session_append_many, session_turn_bytes

pytestmark = pytest.mark.django_db

SESSIONS = "/api/v1/memory/sessions"


def _append(tenant, subject_id, contents, session="s1"):
    session_append_many(
        tenant=tenant,
        subject_id=subject_id,
        drafts=[
            SessionTurnDraft(session_id=session, content=content, ttl_seconds=3600)
            for content in contents
        ],
    )


def _pages(tenant, subject_id, session="s1", limit=200):
    pages: list = []
    offset: int | None = 0
    while offset is not None:
        page = session_history(
            tenant=tenant, subject_id=subject_id, session_id=session, limit=limit, offset=offset
        )
        pages.append(page)
        offset = page.next_offset
    return pages


def test_a_page_stops_before_the_turn_that_would_pass_the_bytes(tenant, settings):
    # Each turn stores its content and "{}": 100 + 2 bytes.
    settings.SESSION_HISTORY_PAGE_MAX_BYTES = 350
    _append(tenant, "a", [f"{index:03d}".ljust(100, "x") for index in range(7)])

    pages = _pages(tenant, "a")

    assert [len(page.results) for page in pages] == [3, 3, 1]
    assert [page.offset for page in pages] == [0, 3, 6]
    assert [page.next_offset for page in pages] == [3, 6, None]
    assert [turn.content[:3] for page in pages for turn in page.results] == [
        f"{index:03d}" for index in range(7)
    ]
    for page in pages:
        size = sum(session_turn_bytes(content=t.content, metadata=t.metadata) for t in page.results)
        assert size <= 350


def test_a_turn_larger_than_the_bound_is_a_page_of_its_own(tenant, settings):
    settings.SESSION_HISTORY_PAGE_MAX_BYTES = 10
    _append(tenant, "a", ["x" * 50, "y" * 50, "z"])

    pages = _pages(tenant, "a")

    assert [[turn.content[0] for turn in page.results] for page in pages] == [["x"], ["y"], ["z"]]


def test_a_page_holds_at_most_the_turn_bound_whatever_the_limit(tenant, settings):
    settings.SESSION_HISTORY_MAX_TURNS = 4
    _append(tenant, "a", [f"turn {index}" for index in range(10)])

    first = session_history(tenant=tenant, subject_id="a", session_id="s1", limit=1000)

    assert [turn.content for turn in first.results] == [f"turn {index}" for index in range(4)]
    assert (first.limit, first.total_count, first.next_offset) == (4, 10, 4)
    assert [len(page.results) for page in _pages(tenant, "a", limit=1000)] == [4, 4, 2]


def test_pages_hold_only_the_callers_turns(tenant, other_tenant, settings):
    settings.SESSION_HISTORY_PAGE_MAX_BYTES = 30
    _append(tenant, "a", ["mine one", "mine two", "mine three"])
    _append(tenant, "b", ["theirs"] * 5)
    _append(other_tenant, "a", ["foreign"] * 5)

    turns = [turn for page in _pages(tenant, "a") for turn in page.results]

    assert [turn.content for turn in turns] == ["mine one", "mine two", "mine three"]


def test_the_api_pages_a_session_of_large_turns_by_next_offset(agent, tenant, settings):
    settings.SESSION_HISTORY_PAGE_MAX_BYTES = 1024 * 1024
    big = "x" * (100 * 1024 - 2)  # with the index, the largest content a turn may have
    for index in range(25):
        response = agent.post(
            f"{SESSIONS}/s1/turns", {"content": f"{index:02d}{big}", "ttl_seconds": 60}
        )
        assert response.status_code == 201

    pages: list = []
    offset: int | None = 0
    while offset is not None:
        body = agent.get(f"{SESSIONS}/s1?limit=1000&offset={offset}").json()
        pages.append(body)
        offset = body["meta"]["next_offset"]

    # 100 KiB + "{}" a turn: ten make 1,024,020 bytes, eleven pass 1 MiB.
    assert [len(page["data"]) for page in pages] == [10, 10, 5]
    assert pages[0]["meta"] == {"total_count": 25, "limit": 200, "offset": 0, "next_offset": 10}
    contents = [turn["content"][:2] for page in pages for turn in page["data"]]
    assert contents == [f"{index:02d}" for index in range(25)]
    assert SessionMemory.objects.filter(tenant=tenant).count() == 25
