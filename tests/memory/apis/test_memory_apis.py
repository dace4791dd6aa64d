import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memory.models import Memory, SessionMemory
from apps.memory.selectors import memory_recall
from apps.memory.services import memory_embed_pending
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.selectors import api_key_cache_clear
from apps.tenancy.services import tenant_halt
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
BATCH = "/api/v1/memory/batch"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _embed_all():
    memory_embed_pending(memory_ids=[str(pk) for pk in Memory.objects.values_list("pk", flat=True)])


def test_write_returns_a_pending_memory_scoped_to_the_key(agent, tenant):
    response = agent.post(
        MEMORY,
        {"text": "Prefers pytest", "tags": ["testing"], "tenant_id": "x", "subject_id": "evil"},
    )

    body = response.json()["data"]
    stored = Memory.objects.get(pk=body["id"])
    assert response.status_code == 201
    assert body["embedding_status"] == "pending"
    assert body["tier"] == "long_term"
    assert (stored.tenant_id, stored.subject_id) == (tenant.pk, "agent-a")


def test_written_memory_is_recalled_identically_via_context_and_api(agent, tenant):
    memory_id = agent.post(MEMORY, {"text": "the staging database is postgres 18"}).json()["data"][
        "id"
    ]
    _embed_all()

    api = agent.post(RECALL, {"query": "which postgres version is staging", "limit": 5}).json()
    context = memory_recall(
        tenant=tenant, subject_id="agent-a", query="which postgres version is staging", limit=5
    )

    assert [hit["memory"]["id"] for hit in api["data"]] == [memory_id]
    assert [str(hit.memory.pk) for hit in context.results] == [memory_id]
    assert api["data"][0]["score"] == pytest.approx(context.results[0].score)
    assert api["data"][0]["memory"]["embedding_status"] == "ready"
    assert api["meta"]["fallback"] is False
    assert api["meta"]["strategy"] == "exact"


def test_memory_is_invisible_and_immutable_across_subject_and_tenant(
    agent, other_agent, foreign_agent, tenant
):
    memory_id = agent.post(MEMORY, {"text": "secret plan alpha"}).json()["data"]["id"]
    _embed_all()

    for intruder in (other_agent, foreign_agent):
        recalled = intruder.post(RECALL, {"query": "secret plan alpha"}).json()
        listed = intruder.get(MEMORY).json()
        deleted = intruder.delete(f"{MEMORY}/{memory_id}")
        assert recalled["data"] == []
        assert listed["data"] == []
        assert deleted.status_code == 404
        assert deleted.json()["error"]["code"] == "not_found"
    assert Memory.objects.filter(pk=memory_id).exists()


def test_fallback_path_is_isolated_across_subject_and_tenant(
    agent, other_agent, foreign_agent, tenant, other_tenant
):
    agent.post(MEMORY, {"text": "secret plan alpha"})
    for broken in (tenant, other_tenant):
        broken.embedding_provider = "openai"
        broken.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
        broken.save()
    # A change saved outside the tenancy services reaches a web process once its cached keys
    # expire (API_KEY_CACHE_SECONDS); clearing the cache stands in for that wait.
    api_key_cache_clear()

    own = agent.post(RECALL, {"query": "secret plan"}).json()
    for intruder in (other_agent, foreign_agent):
        recalled = intruder.post(RECALL, {"query": "secret plan"}).json()
        assert recalled["data"] == []
        assert recalled["meta"]["fallback"] is True

    assert [hit["memory"]["text"] for hit in own["data"]] == ["secret plan alpha"]
    assert own["data"][0]["score"] is None


def test_foreign_and_missing_ids_are_the_same_404(agent, other_agent):
    theirs = other_agent.post(MEMORY, {"text": "theirs"}).json()["data"]["id"]

    foreign = agent.delete(f"{MEMORY}/{theirs}")
    missing = agent.delete(f"{MEMORY}/{uuid.uuid4()}")

    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()


def test_forget_own_memory(agent):
    memory_id = agent.post(MEMORY, {"text": "forget me"}).json()["data"]["id"]

    response = agent.delete(f"{MEMORY}/{memory_id}")

    assert response.status_code == 204
    assert not Memory.objects.filter(pk=memory_id).exists()


def test_supersede_through_the_api_and_list_with_include_superseded(agent):
    old = agent.post(MEMORY, {"text": "standup at 9"}).json()["data"]["id"]

    new = agent.post(MEMORY, {"text": "standup at 10", "supersedes": old}).json()["data"]
    live = agent.get(MEMORY).json()
    everything = agent.get(f"{MEMORY}?include_superseded=true").json()

    assert [m["id"] for m in live["data"]] == [new["id"]]
    assert {m["id"] for m in everything["data"]} == {old, new["id"]}
    assert next(m for m in everything["data"] if m["id"] == old)["superseded_by"] == new["id"]


def test_a_supersede_past_the_history_quota_is_409_and_writes_nothing(
    agent, other_agent, tenant, settings
):
    settings.MEMORY_QUOTA_SUPERSEDED_ROWS = 1
    first = agent.post(MEMORY, {"text": "standup at 9"}).json()["data"]["id"]
    live = agent.post(MEMORY, {"text": "standup at 10", "supersedes": first}).json()["data"]["id"]

    refused = agent.post(MEMORY, {"text": "standup at 11", "supersedes": live})

    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "history_quota_exceeded"
    assert refused.json()["error"]["details"] == {"quota": 1, "superseded": 1}
    assert [m["id"] for m in agent.get(MEMORY).json()["data"]] == [live]
    assert Memory.objects.filter(tenant=tenant).count() == 2
    theirs = other_agent.post(MEMORY, {"text": "mine"}).json()["data"]["id"]
    assert other_agent.post(MEMORY, {"text": "mine too", "supersedes": theirs}).status_code == 201


def test_list_filters_by_source_and_paginates(agent, tenant):
    for i in range(5):
        agent.post(MEMORY, {"text": f"fact {i}"})
    Memory.objects.filter(text="fact 0").update(source="promoted")

    page = agent.get(f"{MEMORY}?limit=2&offset=1").json()
    promoted = agent.get(f"{MEMORY}?source=promoted").json()

    assert [m["text"] for m in page["data"]] == ["fact 3", "fact 2"]
    assert page["meta"] == {"total_count": 5, "limit": 2, "offset": 1}
    assert [m["text"] for m in promoted["data"]] == ["fact 0"]


def test_write_validates_project_id_but_recall_does_not(agent, tenant, other_tenant):
    foreign_project = ProjectFactory.create(tenant=other_tenant)
    own_project = ProjectFactory.create(tenant=tenant)

    refused = agent.post(MEMORY, {"text": "x", "project_id": str(foreign_project.pk)})
    malformed = agent.post(MEMORY, {"text": "x", "project_id": "not-a-uuid"})
    accepted = agent.post(MEMORY, {"text": "project fact", "project_id": str(own_project.pk)})
    recalled = agent.post(RECALL, {"query": "project fact", "project_id": str(uuid.uuid4())})

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_project_id"
    assert malformed.status_code == 422
    assert accepted.status_code == 201
    assert recalled.status_code == 200
    assert Memory.objects.count() == 1


@pytest.mark.parametrize(
    ("_case", "body", "code"),
    [
        ("blank_query", {"query": "  "}, "invalid_query"),
        ("numeric_query", {"query": 5}, "invalid_query"),
        ("long_query", {"query": "q" * 501}, "query_too_long"),
        ("missing_query", {}, "validation_error"),
        ("bad_limit", {"query": "x", "limit": 0}, "validation_error"),
    ],
)
def test_recall_rejects_bad_input_with_422(agent, _case, body, code):
    response = agent.post(RECALL, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize(
    ("_case", "body", "code"),
    [
        ("missing_text", {}, "validation_error"),
        ("blank_text", {"text": "   "}, "validation_error"),
        ("too_long", {"text": "x" * 8001}, "text_too_long"),
        ("bad_tier", {"tier": "forever", "text": "x"}, "validation_error"),
        (
            "session_without_expiry",
            {"tier": "session", "session_id": "s", "content": "c"},
            "expires_at_required",
        ),
        (
            "session_without_content",
            {"tier": "session", "session_id": "s", "ttl_seconds": 60},
            "validation_error",
        ),
        ("confidence_out_of_range", {"text": "x", "confidence": 2}, "validation_error"),
    ],
)
def test_write_rejects_bad_input_before_any_side_effect(agent, _case, body, code):
    response = agent.post(MEMORY, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert Memory.objects.count() == 0
    assert SessionMemory.objects.count() == 0


def test_over_quota_write_is_409_and_writes_nothing(agent, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 1
    agent.post(MEMORY, {"text": "one"})

    response = agent.post(MEMORY, {"text": "two"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "quota_exceeded"
    assert Memory.objects.count() == 1


def test_write_rate_limit_is_429_with_retry_after(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 2
    assert agent.post(MEMORY, {"text": "1"}).status_code == 201
    assert agent.post(MEMORY, {"text": "2"}).status_code == 201

    response = agent.post(MEMORY, {"text": "3"})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 61
    assert Memory.objects.count() == 2


def test_batch_is_all_or_nothing(agent):
    items = [{"text": "ok 1"}, {"text": "ok 2"}, {"text": "   "}]

    response = agent.post(BATCH, {"items": items})

    assert response.status_code == 422
    assert Memory.objects.count() == 0


def test_batch_writes_both_tiers_in_order(agent):
    items = [
        {"text": "long one"},
        {"tier": "session", "session_id": "s1", "content": "turn one", "ttl_seconds": 60},
        {"text": "long two"},
        {"tier": "session", "session_id": "s1", "content": "turn two", "ttl_seconds": 60},
    ]

    response = agent.post(BATCH, {"items": items})

    assert response.status_code == 201
    assert [item["tier"] for item in response.json()["data"]] == [
        "long_term",
        "session",
        "long_term",
        "session",
    ]
    history = agent.get(f"{MEMORY}/sessions/s1").json()["data"]
    assert [turn["content"] for turn in history] == ["turn one", "turn two"]


def test_batch_over_500_items_is_refused(agent):
    response = agent.post(BATCH, {"items": [{"text": f"t{i}"} for i in range(501)]})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "batch_too_large"
    assert Memory.objects.count() == 0


def test_batch_over_quota_writes_nothing(agent, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 3

    response = agent.post(BATCH, {"items": [{"text": f"t{i}"} for i in range(4)]})

    assert response.status_code == 409
    assert Memory.objects.count() == 0


def test_session_history_is_the_callers_own_in_order(agent, other_agent):
    expires = (timezone.now() + timedelta(hours=1)).isoformat()
    for content in ("first", "second", "third"):
        agent.post(
            MEMORY,
            {"tier": "session", "session_id": "s1", "content": content, "expires_at": expires},
        )
    other_agent.post(
        MEMORY, {"tier": "session", "session_id": "s1", "content": "intruder", "ttl_seconds": 60}
    )

    mine = agent.get(f"{MEMORY}/sessions/s1").json()
    theirs = other_agent.get(f"{MEMORY}/sessions/s1").json()

    assert [turn["content"] for turn in mine["data"]] == ["first", "second", "third"]
    assert mine["meta"]["total_count"] == 3
    assert [turn["content"] for turn in theirs["data"]] == ["intruder"]


def test_custody_halt_blocks_agent_writes_but_not_reads(agent, tenant):
    remember(tenant, "agent-a", "before the halt")
    tenant_halt(tenant=tenant)

    write = agent.post(MEMORY, {"text": "during the halt"})
    recall = agent.post(RECALL, {"query": "halt"})
    listing = agent.get(MEMORY)

    assert write.status_code == 423
    assert write.json()["error"]["code"] == "tenant_halted"
    assert recall.status_code == 200
    assert listing.status_code == 200
    assert Memory.objects.filter(text="during the halt").count() == 0


def test_superadmin_oversight_lists_and_deletes_any_subject(superadmin, agent, other_agent, tenant):
    mine = agent.post(MEMORY, {"text": "a's memory"}).json()["data"]["id"]
    other_agent.post(MEMORY, {"text": "b's memory"})
    tenant_halt(tenant=tenant)  # oversight is not frozen by a halt

    listed = superadmin.get(f"{MEMORY}?all_subjects=true").json()
    deleted = superadmin.delete(f"{MEMORY}/{mine}")

    assert {m["subject_id"] for m in listed["data"]} == {"agent-a", "agent-b"}
    assert listed["meta"]["total_count"] == 2
    assert deleted.status_code == 204
    assert not Memory.objects.filter(pk=mine).exists()


def test_oversight_requires_impersonation(make_caller, db):
    caller = make_caller(None, ApiKeyRole.SUPERADMIN)

    listed = caller.get(f"{MEMORY}?all_subjects=true")
    deleted = caller.delete(f"{MEMORY}/{uuid.uuid4()}")

    assert listed.status_code == deleted.status_code == 422
    assert listed.json()["error"]["code"] == "impersonation_tenant_required"


def test_all_subjects_is_ignored_for_non_superadmins(user, agent):
    agent.post(MEMORY, {"text": "agent's"})
    user.post(MEMORY, {"text": "user's"})

    listed = user.get(f"{MEMORY}?all_subjects=true").json()

    assert [m["text"] for m in listed["data"]] == ["user's"]


def test_superadmin_cannot_delete_in_another_tenant(superadmin, foreign_agent):
    theirs = foreign_agent.post(MEMORY, {"text": "foreign"}).json()["data"]["id"]

    response = superadmin.delete(f"{MEMORY}/{theirs}")

    assert response.status_code == 404
    assert Memory.objects.filter(pk=theirs).exists()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", MEMORY, {"text": "x"}),
        ("get", MEMORY, None),
        ("post", BATCH, {"items": [{"text": "x"}]}),
        ("post", RECALL, {"query": "x"}),
        ("get", f"{MEMORY}/sessions/s1", None),
        ("delete", f"{MEMORY}/00000000-0000-4000-8000-000000000001", None),
    ],
)
def test_every_memory_endpoint_requires_a_key(anonymous, db, method, path, body):
    response = getattr(anonymous, method)(path, body, format="json")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize("role", [ApiKeyRole.AGENT, ApiKeyRole.USER, ApiKeyRole.ORCHESTRATOR])
def test_every_tenant_role_may_use_memory(make_caller, tenant, role):
    caller = make_caller(tenant, role, agent_id="x" if role == ApiKeyRole.AGENT else "")

    assert caller.post(MEMORY, {"text": "mine"}).status_code == 201
    assert caller.get(MEMORY).status_code == 200
    assert caller.post(RECALL, {"query": "mine"}).status_code == 200


def test_context_is_stored_indexed_and_returned_but_not_as_the_text(agent, tenant):
    written = agent.post(
        MEMORY, {"text": "We ship on Tuesdays.", "context": "release calendar, 2026 planning"}
    ).json()["data"]
    _embed_all()

    found = agent.post(RECALL, {"query": "release calendar", "mode": "keyword", "limit": 5}).json()[
        "data"
    ]

    assert written["context"] == "release calendar, 2026 planning"
    assert [hit["memory"]["text"] for hit in found] == ["We ship on Tuesdays."]
    assert found[0]["memory"]["context"] == "release calendar, 2026 planning"


def test_list_keeps_memories_carrying_every_tag_asked_for(agent, other_agent):
    both = agent.post(MEMORY, {"text": "both", "tags": ["a", "b"]}).json()["data"]["id"]
    agent.post(MEMORY, {"text": "only a", "tags": ["a"]})
    other_agent.post(MEMORY, {"text": "theirs", "tags": ["a", "b"]})

    tagged = agent.get(MEMORY, data={"tags": ["a", "b"]}).json()
    too_long = agent.get(MEMORY, data={"tags": ["x" * 65]})

    assert [memory["id"] for memory in tagged["data"]] == [both]
    assert tagged["meta"]["total_count"] == 1
    assert too_long.status_code == 422
