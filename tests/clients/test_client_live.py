"""Every method of the sync client, against a live Engram server over real HTTP."""

import threading
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime

import pytest
from engram_client import (
    AuthenticationError,
    Engram,
    EngramConnectionError,
    InvalidRequestError,
    Memory,
    NewMemory,
    NewTurn,
    NotFoundError,
    RateLimitedError,
    SessionTurn,
)

from apps.core.in_flight import subject_in_flight_slot
from apps.knowledge.models import Article, ArticleAccessEvent
from apps.memory.models import Memory as MemoryRow
from apps.memory.models import SessionMemory
from apps.memory.services import memory_embed_pending
from apps.projects.services import project_create
from apps.tenancy.models import ApiKeyRole, IdempotencyRecord
from tests.clients.conftest import Recorder
from tests.clients.session_ids import SESSION_IDS

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

FREEZE = {
    "title": "Friday deploy freeze",
    "body": "We never deploy to production on Fridays; hotfixes for incidents are the exception.",
    "category": "decision",
}


def _embed(*memories: Memory) -> None:
    memory_embed_pending(memory_ids=[str(memory.id) for memory in memories])


def test_whoami_names_the_keys_scope(engram, tenant):
    me = engram.whoami()

    assert (me.tenant_id, me.tenant_slug, me.subject_id, me.role) == (
        tenant.pk,
        tenant.slug,
        "agent-a",
        "agent",
    )


def test_remember_then_recall_returns_typed_hits(engram):
    memory = engram.remember("The user prefers tabs", tags=["style"], metadata={"n": 1})
    _embed(memory)

    recalled = engram.recall("tabs or spaces?", limit=5)

    assert isinstance(memory, Memory)
    assert (memory.text, memory.tags, memory.metadata, memory.embedding_status) == (
        "The user prefers tabs",
        ["style"],
        {"n": 1},
        "pending",
    )
    assert [hit.memory.id for hit in recalled.hits] == [memory.id]
    assert isinstance(recalled.hits[0].score, float)
    assert recalled.hits[0].memory.embedding_status == "ready"
    assert (recalled.meta.fallback, recalled.meta.mode) == (False, "hybrid")


def test_remember_supersedes_an_old_memory(engram):
    old = engram.remember("Staging runs PostgreSQL 17")
    new = engram.remember("Staging runs PostgreSQL 18", supersedes=old.id)

    listed = [memory.id for memory in engram.memories()]
    everything = {memory.id: memory for memory in engram.memories(include_superseded=True)}

    assert listed == [new.id]
    assert everything[old.id].superseded_by == new.id


def test_valid_time_is_written_returned_and_read_back_as_of(engram, make_engram, tenant):
    march = datetime(2024, 3, 1, tzinfo=UTC)
    berlin = engram.remember("The user lives in Berlin.", occurred_at=march)
    lisbon = engram.remember(
        "The user lives in Lisbon.", valid_from="2024-06-01T00:00:00Z", supersedes=berlin.id
    )
    theirs = make_engram(tenant, agent_id="agent-b").remember(
        "The user lives in Madrid.", valid_from=march
    )
    _embed(berlin, lisbon, theirs)
    spring = datetime(2024, 4, 1)  # noqa: DTZ001 - naive on purpose: the client sends it as UTC

    recalled = engram.recall("where does the user live?", as_of=spring)
    listed = engram.list_memories(as_of=spring)
    merged = engram.recall_context("where does the user live?", as_of="2024-04-01T00:00:00Z")
    now = engram.recall("where does the user live?")

    assert (berlin.valid_from, berlin.valid_to) == (march, None)
    assert (lisbon.supersedes, lisbon.supersede_reason) == ([berlin.id], "explicit")
    assert [(hit.memory.id, hit.validity) for hit in recalled.hits] == [(berlin.id, "superseded")]
    assert recalled.hits[0].memory.valid_to == datetime(2024, 6, 1, tzinfo=UTC)
    assert recalled.meta.as_of == datetime(2024, 4, 1, tzinfo=UTC)
    assert [memory.id for memory in listed.data] == [berlin.id]
    assert [item.id for item in merged.items if item.source == "memory"] == [berlin.id]
    assert merged.items[0].validity == "superseded" or merged.items[0].source == "knowledge"
    assert [(hit.memory.id, hit.validity) for hit in now.hits] == [(lisbon.id, "current")]


def test_remember_many_writes_both_tiers_in_order(engram):
    written = engram.remember_many(
        [
            "Deploys happen on Tuesdays",
            NewTurn(session_id="s-1", content="hello", role="user"),
            NewMemory(text="The CI runs on two cores", tags=["ci"]),
        ]
    )

    assert [type(item) for item in written] == [Memory, SessionTurn, Memory]
    assert [getattr(item, "text", None) or item.content for item in written] == [
        "Deploys happen on Tuesdays",
        "hello",
        "The CI runs on two cores",
    ]
    assert MemoryRow.objects.count() == 2
    assert SessionMemory.objects.count() == 1


def test_memories_iterates_every_page(engram):
    for start in (0, 125):
        engram.remember_many([f"fact number {n}" for n in range(start, start + 125)])

    first_page = engram.list_memories(limit=200)
    every = list(engram.memories())

    assert (len(first_page.data), first_page.meta.total_count) == (200, 250)
    assert len(every) == 250
    assert {memory.text for memory in every} == {f"fact number {n}" for n in range(250)}
    assert len({memory.id for memory in every}) == 250


def test_forget_deletes_and_a_second_forget_is_not_found(engram):
    memory = engram.remember("A fact to drop")

    engram.forget(memory.id)
    with pytest.raises(NotFoundError) as missing:
        engram.forget(memory.id)

    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert MemoryRow.objects.count() == 0


def test_session_append_history_and_turns_keep_their_order(engram):
    for n in range(3):
        engram.session_append("s-1", f"turn {n}", role="assistant" if n % 2 else "user")

    page = engram.session_history("s-1", limit=2)
    turns = list(engram.session_turns("s-1"))

    assert [turn.content for turn in page.data] == ["turn 0", "turn 1"]
    assert page.meta.total_count == 3
    assert [(turn.role, turn.content) for turn in turns] == [
        ("user", "turn 0"),
        ("assistant", "turn 1"),
        ("user", "turn 2"),
    ]
    assert [turn.seq for turn in turns] == sorted(turn.seq for turn in turns)


def test_session_append_posts_to_the_sessions_turns_route(make_engram, tenant):
    recorder = Recorder()
    engram = make_engram(tenant, recorder=recorder)

    turn = engram.session_append("s 1", "hello", role="fact", metadata={"k": 1})

    (response,) = recorder.responses
    assert response.request.method == "POST"
    assert response.request.url.raw_path == b"/api/v1/memory/sessions/s%201/turns"
    assert (turn.session_id, turn.role, turn.content, turn.metadata) == (
        "s 1",
        "fact",
        "hello",
        {"k": 1},
    )
    assert [row.content for row in engram.session_turns("s 1")] == ["hello"]


@pytest.mark.parametrize(("_case", "session_id", "neighbour"), SESSION_IDS)
def test_any_printable_session_id_round_trips(make_engram, tenant, _case, session_id, neighbour):
    engram = make_engram(tenant)
    engram.session_append(neighbour, "the neighbour's")

    appended = [engram.session_append(session_id, text) for text in ["one", "two", "three"]]
    read_back = [turn.content for turn in engram.session_turns(session_id)]
    popped = engram.session_pop(session_id)
    deleted = engram.session_delete_turn(session_id, appended[0].seq)
    left = [turn.content for turn in engram.session_history(session_id).data]
    cleared = engram.session_clear(session_id)

    assert {turn.session_id for turn in appended} == {session_id}
    assert read_back == ["one", "two", "three"]
    assert popped is not None
    assert (popped.session_id, popped.content) == (session_id, "three")
    assert deleted.content == "one"
    assert left == ["two"]
    assert (cleared.session_id, cleared.deleted) == (session_id, 1)
    assert engram.session_pop(session_id) is None
    assert list(SessionMemory.objects.values_list("session_id", "content")) == [
        (neighbour, "the neighbour's")
    ]


REFUSED_SESSION_IDS = [
    ("blank", "   ", "invalid_session_id"),
    ("too_long", "s" * 201, "invalid_session_id"),
    ("tab", "a\tb", "invalid_session_id"),
    ("newline", "a\nb", "invalid_session_id"),
    # NUL is refused anywhere in a request, path included, before routing (the input contract).
    ("nul", "a\x00b", "invalid_text"),
]


@pytest.mark.parametrize(("_case", "session_id", "code"), REFUSED_SESSION_IDS)
def test_an_id_no_session_may_have_is_refused_alike_by_every_method(
    make_engram, tenant, _case, session_id, code
):
    engram = make_engram(tenant)
    calls = {
        "append": lambda: engram.session_append(session_id, "c"),
        "history": lambda: engram.session_history(session_id),
        "pop": lambda: engram.session_pop(session_id),
        "delete_turn": lambda: engram.session_delete_turn(session_id, 1),
        "clear": lambda: engram.session_clear(session_id),
    }
    refusals = {}
    for name, call in calls.items():
        with pytest.raises(InvalidRequestError) as refused:
            call()
        refusals[name] = (refused.value.status, refused.value.code)

    assert refusals == dict.fromkeys(calls, (422, code))
    assert SessionMemory.objects.count() == 0


def test_an_empty_session_id_is_refused_before_any_request(make_engram, tenant):
    recorder = Recorder()
    engram = make_engram(tenant, recorder=recorder)
    calls = {
        "append": lambda: engram.session_append("", "c"),
        "history": lambda: engram.session_history(""),
        "pop": lambda: engram.session_pop(""),
        "delete_turn": lambda: engram.session_delete_turn("", 1),
        "clear": lambda: engram.session_clear(""),
    }
    refusals = {}
    for name, call in calls.items():
        with pytest.raises(InvalidRequestError) as refused:
            call()
        refusals[name] = (refused.value.status, refused.value.code)

    assert refusals == dict.fromkeys(calls, (None, "invalid_session_id"))
    assert recorder.responses == []
    assert SessionMemory.objects.count() == 0


def test_session_pop_delete_and_clear_touch_only_the_callers_session(make_engram, tenant):
    mine, theirs = make_engram(tenant, agent_id="agent-a"), make_engram(tenant, agent_id="b")
    turns = [mine.session_append("s-1", f"turn {n}") for n in range(4)]
    theirs.session_append("s-1", "their turn")

    popped = mine.session_pop("s-1")
    deleted = mine.session_delete_turn("s-1", turns[1].seq)
    left = [turn.content for turn in mine.session_turns("s-1")]
    cleared = mine.session_clear("s-1")
    empty_pop = mine.session_pop("s-1")
    with pytest.raises(NotFoundError) as missing:
        mine.session_delete_turn("s-1", turns[0].seq)

    assert popped is not None
    assert (popped.seq, popped.content) == (turns[3].seq, "turn 3")
    assert deleted.content == "turn 1"
    assert left == ["turn 0", "turn 2"]
    assert (cleared.session_id, cleared.deleted) == ("s-1", 2)
    assert empty_pop is None
    assert missing.value.code == "not_found"
    assert [turn.content for turn in theirs.session_turns("s-1")] == ["their turn"]


def test_a_pop_whose_response_was_lost_pops_once(make_engram, tenant, proxy):
    direct = make_engram(tenant)
    for n in range(3):
        direct.session_append("s-1", f"turn {n}")
    proxy.plan = ["drop"]
    engram = make_engram(tenant, base_url=proxy.url, backoff_base=0.05)

    popped = engram.session_pop("s-1")

    assert [seen.action for seen in proxy.seen] == ["drop", "pass"]
    assert popped is not None
    assert popped.content == "turn 2"
    assert [turn.content for turn in direct.session_turns("s-1")] == ["turn 0", "turn 1"]


def test_list_memories_filters_by_every_tag_given(engram):
    both = engram.remember("tagged twice", tags=["ns:a", "ns:a.b"])
    engram.remember("tagged once", tags=["ns:a"])
    engram.remember("untagged")

    only_both = [memory.id for memory in engram.memories(tags=["ns:a", "ns:a.b"])]
    with_a = engram.list_memories(tags=["ns:a"])

    assert only_both == [both.id]
    assert with_a.meta.total_count == 2


def test_promote_enqueues_a_session_and_reports_too_few_turns(engram):
    engram.session_append("short", "only one turn")
    for n in range(3):
        engram.session_append("long", f"I prefer option {n}")

    short = engram.promote("short")
    long = engram.promote("long")

    assert (short.reason, short.enqueued, short.job_id) == ("too_few_turns", False, None)
    assert (long.session_id, long.reason, long.enqueued) == ("long", "enqueued", True)
    assert isinstance(long.job_id, uuid.UUID)


def test_graduate_turns_a_memory_into_an_owner_visible_article(engram):
    memory = engram.remember("Run the migrations before deploying the web tier")
    _embed(memory)

    graduated = engram.graduate(memory.id)

    article = Article.objects.get()
    assert (graduated.verdict, graduated.created) == ("created", True)
    assert graduated.article.id == article.pk
    assert graduated.article.visibility == "owner"


def test_resolve_project_finds_it_by_slug_and_repository(engram, tenant):
    project = project_create(
        tenant=tenant, name="Engram", repo_url="https://github.com/acme/engram"
    )

    by_slug = engram.resolve_project(slug="engram")
    by_repo = engram.resolve_project(repo_url="git@github.com:acme/engram.git")

    assert by_slug.id == by_repo.id == project.pk
    assert by_slug.name == "Engram"


def test_knowledge_create_search_and_context(make_engram, tenant):
    author, reader = make_engram(tenant, agent_id="agent-a"), make_engram(tenant, agent_id="b")

    created = author.knowledge_create(**FREEZE, tags=["deploy"])
    duplicate = reader.knowledge_create(**{**FREEZE, "title": "Freeze, again"})
    found = reader.knowledge_search("deploy on fridays", limit=5)
    context = reader.knowledge_context("deploy on fridays", limit=3)

    assert (created.verdict, created.created) == ("created", True)
    assert (duplicate.verdict, duplicate.article.id) == ("duplicate", created.article.id)
    assert [hit.id for hit in found.hits] == [created.article.id]
    assert found.meta.answer_confidence in {"answer", "weak", "none"}
    assert [article.body for article in context.data.results] == [FREEZE["body"]]
    assert context.data.linked == []


def test_recall_context_and_referenced(engram):
    memory = engram.remember("We never deploy on Fridays, says the on-call lead")
    _embed(memory)
    article = engram.knowledge_create(**FREEZE).article

    merged = engram.recall_context("can I deploy on friday?", limit=5)
    knowledge = [item.id for item in merged.items if item.source == "knowledge"]
    reported = engram.referenced(merged.meta.recall_id, knowledge)

    assert {(item.source, item.id) for item in merged.items} == {
        ("memory", memory.id),
        ("knowledge", article.id),
    }
    assert (reported.recall_id, reported.recorded) == (merged.meta.recall_id, 1)
    assert ArticleAccessEvent.objects.filter(access_type="referenced").count() == 1


def test_an_error_carries_the_api_code_and_writes_nothing(make_engram, engram, tenant):
    with pytest.raises(InvalidRequestError) as invalid:
        engram.remember("x", project_id=uuid.uuid4())
    with pytest.raises(AuthenticationError) as unauthenticated:
        make_engram(tenant, key="engram_not-a-real-key").whoami()

    assert (invalid.value.status, invalid.value.code) == (422, "invalid_project_id")
    assert (unauthenticated.value.status, unauthenticated.value.code) == (
        401,
        "authentication_failed",
    )
    assert MemoryRow.objects.count() == 0


def test_a_superadmin_oversees_every_subject_of_the_impersonated_tenant(
    make_engram, issue_key, tenant
):
    mine = make_engram(tenant, agent_id="agent-a").remember("agent a's fact")
    theirs = make_engram(tenant, agent_id="agent-b").remember("agent b's fact")
    operator = make_engram(
        key=issue_key(None, "", ApiKeyRole.SUPERADMIN), impersonate_tenant=tenant.slug
    )

    seen = {memory.id for memory in operator.memories(all_subjects=True)}
    operator.forget(theirs.id)

    assert seen == {mine.id, theirs.id}
    assert list(MemoryRow.objects.values_list("pk", flat=True)) == [mine.id]


def test_request_reaches_any_endpoint_raw(engram):
    body = engram.request("POST", "/api/v1/memory", json={"text": "raw write"})

    assert body["data"]["text"] == "raw write"
    assert IdempotencyRecord.objects.count() == 1


# ----------------------------------------------------------------------------- retries


def test_a_429_is_retried_after_retry_after(make_engram, tenant, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 3
    recorder = Recorder()
    engram = make_engram(tenant, recorder=recorder)
    # Windows are fixed (aligned to multiples of their length): start at the top of one so both
    # writes fall inside it however slow the machine is.
    time.sleep(3 - time.time() % 3)

    engram.remember("first")
    started = time.monotonic()
    second = engram.remember("second")
    waited = time.monotonic() - started

    limited = recorder.responses[1]
    assert recorder.statuses == [201, 429, 201]
    assert limited.json()["error"]["code"] == "rate_limited"
    assert waited >= float(limited.headers["Retry-After"])
    assert second.text == "second"
    assert MemoryRow.objects.count() == 2


def test_a_429_past_the_retries_is_raised_with_its_hint(make_engram, tenant, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    engram = make_engram(tenant, max_retries=0)
    engram.remember("first")

    with pytest.raises(RateLimitedError) as limited:
        engram.remember("second")

    assert (limited.value.status, limited.value.code) == (429, "rate_limited")
    assert limited.value.retry_after is not None
    assert limited.value.retry_after >= 1
    assert MemoryRow.objects.count() == 1


def test_requests_in_flight_are_waited_out_past_max_retries(make_engram, tenant, settings):
    """The key's one slot is held for 2.5 s: more refusals than ``max_retries`` allows, each
    waited out (none longer than its ``Retry-After``), and then the write lands once."""
    settings.SUBJECT_MAX_IN_FLIGHT = 1
    recorder = Recorder()
    engram = make_engram(tenant, recorder=recorder, max_retries=1)
    held = ExitStack()
    held.enter_context(subject_in_flight_slot(tenant_id=tenant.pk, subject_id="agent-a"))
    threading.Timer(2.5, held.close).start()

    written = engram.remember("after the other request ended")

    refused = recorder.statuses[:-1]
    assert recorder.statuses[-1] == 201
    assert len(refused) > 2  # past max_retries=1: 2.5 s of waits of at most 1 s each
    assert set(refused) == {429}
    assert {r.json()["error"]["code"] for r in recorder.responses[:-1]} == {
        "too_many_requests_in_flight"
    }
    assert MemoryRow.objects.get().text == written.text


def test_requests_in_flight_are_not_waited_out_without_retries(make_engram, tenant, settings):
    settings.SUBJECT_MAX_IN_FLIGHT = 1
    engram = make_engram(tenant, max_retries=0)

    with (
        subject_in_flight_slot(tenant_id=tenant.pk, subject_id="agent-a"),
        pytest.raises(RateLimitedError) as limited,
    ):
        engram.remember("refused")

    assert limited.value.code == "too_many_requests_in_flight"
    assert MemoryRow.objects.count() == 0


def test_a_batch_larger_than_the_write_rate_admits_is_refused_at_once(
    make_engram, tenant, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 3
    recorder = Recorder()
    engram = make_engram(tenant, recorder=recorder)

    with pytest.raises(RateLimitedError) as limited:
        engram.remember_many(["one", "two", "three", "four"])

    # No wait lets four items through a limit of three, so the 429 is not retried.
    assert recorder.statuses == [429]
    assert (limited.value.code, limited.value.details["limit"]) == ("rate_limited", 3)
    assert MemoryRow.objects.count() == 0


def test_a_write_whose_response_was_lost_is_retried_and_stored_once(make_engram, tenant, proxy):
    proxy.plan = ["drop"]
    recorder = Recorder()
    engram = make_engram(tenant, base_url=proxy.url, recorder=recorder, backoff_base=0.05)

    memory = engram.remember("Stored exactly once")

    keys = [seen.headers["idempotency-key"] for seen in proxy.seen]
    assert [seen.action for seen in proxy.seen] == ["drop", "pass"]
    assert keys[0] == keys[1]
    assert recorder.statuses == [201]
    assert recorder.responses[0].headers["Idempotent-Replayed"] == "true"
    assert list(MemoryRow.objects.values_list("pk", "text")) == [(memory.id, "Stored exactly once")]


def test_each_write_gets_its_own_key(make_engram, tenant, proxy):
    engram = make_engram(tenant, base_url=proxy.url)

    engram.remember("same text")
    engram.remember("same text")

    keys = {seen.headers["idempotency-key"] for seen in proxy.seen}
    assert len(keys) == 2
    assert MemoryRow.objects.count() == 2


def test_a_503_is_retried_after_retry_after(make_engram, tenant, proxy):
    proxy.plan = ["busy"]
    engram = make_engram(tenant, base_url=proxy.url)

    started = time.monotonic()
    me = engram.whoami()

    assert time.monotonic() - started >= 1
    assert [seen.action for seen in proxy.seen] == ["busy", "pass"]
    assert me.subject_id == "agent-a"


def test_an_unreachable_server_is_a_connection_error(make_engram, tenant, free_tcp_port):
    engram = make_engram(
        tenant, base_url=f"http://127.0.0.1:{free_tcp_port}", max_retries=1, backoff_base=0.01
    )

    with pytest.raises(EngramConnectionError) as unreachable:
        engram.whoami()

    assert (unreachable.value.code, unreachable.value.status) == ("engram_unreachable", None)


def test_defaults_come_from_the_environment(monkeypatch, live_server, issue_key, tenant):
    monkeypatch.setenv("ENGRAM_API_URL", live_server.url + "/")
    monkeypatch.setenv("ENGRAM_API_KEY", issue_key(tenant, "from-env"))

    with Engram() as engram:
        me = engram.whoami()

    assert engram.base_url == live_server.url
    assert me.subject_id == "from-env"
