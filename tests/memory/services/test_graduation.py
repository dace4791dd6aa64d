import threading
import uuid

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from apps.knowledge.models import Article
from apps.knowledge.selectors import knowledge_search
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import AlreadyGraduated, InvalidMemoryId, MemoryNotFound
from apps.memory.models import Memory
from apps.memory.services import memory_forget, memory_graduate, memory_graduation_sweep
from apps.tenancy.models import ApiKeyRole
from tests.knowledge.helpers import break_embeddings, publish
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory
from tests.tenancy.factories import TenantFactory

GRADUATE = "/api/v1/memory/graduate"


def _hot(tenant, subject, text, recalls=3, **kwargs):
    memory = remember(tenant, subject, text, **kwargs)
    Memory.objects.filter(pk=memory.pk).update(recall_count=recalls)
    memory.refresh_from_db()
    return memory


def test_graduation_creates_an_owner_visible_article(tenant):
    memory = _hot(tenant, "agent-a", "The billing service retries webhooks three times.")

    result = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    memory.refresh_from_db()
    article = result.article
    assert (result.verdict, result.created) == ("created", True)
    assert (article.visibility, article.owner_agent_id, article.source) == (
        "owner",
        "agent-a",
        "graduated",
    )
    assert article.source_memory_id == memory.pk
    assert memory.graduated_at is not None
    assert memory.graduated_article_id == article.pk


def test_a_peer_agent_cannot_find_a_graduated_article(tenant):
    memory = _hot(tenant, "agent-a", "The billing service retries webhooks three times.")
    memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    own = knowledge_search(
        tenant=tenant, viewer=Viewer.for_subject("agent-a"), query="billing webhooks retries"
    )
    peer = knowledge_search(
        tenant=tenant, viewer=Viewer.for_subject("agent-b"), query="billing webhooks retries"
    )

    assert [hit.article.source_memory_id for hit in own.results] == [memory.pk]
    assert peer.results == []


def test_repeat_graduation_short_circuits_without_the_gate(tenant, mocker):
    memory = _hot(tenant, "agent-a", "Webhooks retry three times.")
    first = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)
    gate = mocker.patch("apps.memory.services.graduation.propose_article")

    again = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    gate.assert_not_called()
    assert (again.verdict, again.created, again.article.pk) == (
        "duplicate",
        False,
        first.article.pk,
    )


def test_exact_duplicate_graduates_to_the_canonical_article(tenant):
    canonical = publish(tenant, "Webhook retries", "Webhooks retry three times.")
    memory = _hot(tenant, "agent-a", "Webhooks retry three times.")

    result = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    assert (result.verdict, result.created, result.article.pk) == ("duplicate", False, canonical.pk)
    assert Article.objects.count() == 1


def test_re_scope_global_on_first_graduation_makes_a_tenant_wide_article(tenant):
    project = ProjectFactory.create(tenant=tenant)
    memory = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)

    result = memory_graduate(
        tenant=tenant, subject_id="agent-a", memory_id=memory.pk, re_scope="global"
    )
    same_again = memory_graduate(
        tenant=tenant, subject_id="agent-a", memory_id=memory.pk, re_scope="global"
    )

    assert result.article.project_id is None
    assert same_again.verdict == "duplicate"


def test_re_scope_global_after_a_project_graduation_is_409(tenant):
    project = ProjectFactory.create(tenant=tenant)
    memory = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)
    first = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    with pytest.raises(AlreadyGraduated):
        memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk, re_scope="global")

    assert first.article.project_id == project.pk
    assert Article.objects.count() == 1


def test_re_scope_global_on_a_global_memory_is_a_same_scope_no_op(tenant):
    memory = _hot(tenant, "agent-a", "Deploys need a canary.")
    memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    again = memory_graduate(
        tenant=tenant, subject_id="agent-a", memory_id=memory.pk, re_scope="global"
    )

    assert again.verdict == "duplicate"


def test_gate_unavailable_stamps_nothing(tenant):
    memory = _hot(tenant, "agent-a", "Deploys need a canary.")
    break_embeddings(tenant)

    from apps.knowledge.exceptions import GateUnavailable

    with pytest.raises(GateUnavailable):
        memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    memory.refresh_from_db()
    assert memory.graduated_at is None
    assert Article.objects.count() == 0


@pytest.mark.parametrize("_case", ["other_subject", "other_tenant", "missing"])
def test_foreign_or_missing_memory_is_not_found(tenant, other_tenant, _case):
    owner = {"other_subject": (tenant, "agent-b"), "other_tenant": (other_tenant, "agent-a")}
    target = _hot(*owner[_case], "theirs").pk if _case != "missing" else uuid.uuid4()

    with pytest.raises(MemoryNotFound):
        memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=target)

    assert Article.objects.count() == 0


def test_malformed_memory_id_is_invalid(tenant):
    with pytest.raises(InvalidMemoryId):
        memory_graduate(tenant=tenant, subject_id="agent-a", memory_id="nope")


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_graduations_with_different_scopes_one_wins(tenant):
    project = ProjectFactory.create(tenant=tenant)
    memory = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)
    start = threading.Barrier(2)
    outcomes: list[str] = []
    lock = threading.Lock()

    def graduate(re_scope):
        try:
            start.wait()
            result = memory_graduate(
                tenant=tenant, subject_id="agent-a", memory_id=memory.pk, re_scope=re_scope
            )
            outcome = f"ok:{result.verdict}"
        except AlreadyGraduated:
            outcome = "409"
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=graduate, args=(scope,)) for scope in (None, "global")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["409", "ok:created"]
    assert Article.objects.count() == 1


def test_sweep_graduates_hot_memories_only_and_never_re_scopes(tenant):
    project = ProjectFactory.create(tenant=tenant)
    hot = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)
    _hot(tenant, "agent-a", "Lukewarm fact about lunch.", recalls=2)

    result = memory_graduation_sweep()

    hot.refresh_from_db()
    assert result.graduated == 1
    assert hot.graduated_article.project_id == project.pk
    assert Memory.objects.filter(graduated_at__isnull=False).count() == 1


def test_sweep_is_fair_across_tenants_and_bounded(tenant, settings):
    settings.MEMORY_GRADUATION_MAX_PER_RUN = 4
    busy, quiet = tenant, TenantFactory.create()
    for i in range(6):
        _hot(busy, "agent-a", f"Busy tenant fact number {i} about topic {i}.", recalls=10)
    _hot(quiet, "agent-a", "Quiet tenant's single hot fact.", recalls=3)

    result = memory_graduation_sweep()

    graduated = Memory.objects.filter(graduated_at__isnull=False)
    assert result.graduated == 4
    assert graduated.filter(tenant=quiet).count() == 1  # not starved behind the busy tenant
    assert graduated.filter(tenant=busy).count() == 3


def test_sweep_leaves_memories_ungraduated_when_the_gate_falls_open(tenant):
    memory = _hot(tenant, "agent-a", "Deploys need a canary.")
    break_embeddings(tenant)

    result = memory_graduation_sweep()

    memory.refresh_from_db()
    assert (result.graduated, result.unavailable) == (0, 1)
    assert memory.graduated_at is None


def test_graduate_api_statuses(agent, tenant):
    memory = _hot(tenant, "agent-a", "Deploys need a canary.")

    created = agent.post(GRADUATE, {"memory_id": str(memory.pk)})
    again = agent.post(GRADUATE, {"memory_id": str(memory.pk)})
    malformed = agent.post(GRADUATE, {"memory_id": "nope"})
    missing = agent.post(GRADUATE, {"memory_id": str(uuid.uuid4())})
    bad_scope = agent.post(GRADUATE, {"memory_id": str(memory.pk), "re_scope": "planet"})

    assert created.status_code == 201
    assert created.json()["data"]["verdict"] == "created"
    assert "body" not in created.json()["data"]["article"]
    assert again.status_code == 200
    assert again.json()["data"]["verdict"] == "duplicate"
    assert (malformed.status_code, malformed.json()["error"]["code"]) == (422, "invalid_memory_id")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    assert (bad_scope.status_code, bad_scope.json()["error"]["code"]) == (422, "invalid_re_scope")


def test_graduate_api_gate_unavailable_is_503(agent, tenant):
    memory = _hot(tenant, "agent-a", "Deploys need a canary.")
    break_embeddings(tenant)

    response = agent.post(GRADUATE, {"memory_id": str(memory.pk)})

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "gate_unavailable"


def test_graduate_api_past_the_authors_article_quota_is_409_and_stamps_nothing(
    agent, tenant, settings
):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 1
    first = _hot(tenant, "agent-a", "Deploys need a canary.")
    second = _hot(tenant, "agent-a", "Invoices are rendered by the PDF worker.")
    assert agent.post(GRADUATE, {"memory_id": str(first.pk)}).status_code == 201

    response = agent.post(GRADUATE, {"memory_id": str(second.pk)})

    second.refresh_from_db()
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "article_quota_exceeded"
    assert response.json()["error"]["details"] == {"scope": "author", "quota": 1, "stored": 1}
    assert (second.graduated_at, Article.objects.filter(tenant=tenant).count()) == (None, 1)


def test_graduate_api_409_for_a_second_scope(agent, tenant):
    project = ProjectFactory.create(tenant=tenant)
    memory = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)
    agent.post(GRADUATE, {"memory_id": str(memory.pk)})

    response = agent.post(GRADUATE, {"memory_id": str(memory.pk), "re_scope": "global"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "already_graduated"


@pytest.mark.django_db(transaction=True)
def test_concurrent_keyed_graduations_over_http_with_different_scopes_one_wins(make_caller, tenant):
    # Keyed requests run in one request transaction, so the stamp commits only at its end:
    # the graduation lock has to be held until then.
    raw_key = make_caller(tenant, agent_id="agent-a").issued.raw_key
    project = ProjectFactory.create(tenant=tenant)
    memory = _hot(tenant, "agent-a", "Deploys need a canary.", project_id=project.pk)
    start = threading.Barrier(2)
    statuses: list[int] = []

    def graduate(re_scope, key):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        body = {"memory_id": str(memory.pk)} | ({"re_scope": re_scope} if re_scope else {})
        try:
            start.wait()
            statuses.append(
                client.post(GRADUATE, body, format="json", HTTP_IDEMPOTENCY_KEY=key).status_code
            )
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=graduate, args=(scope, f"key-{n}"))
        for n, scope in enumerate((None, "global"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [201, 409]
    assert Article.objects.count() == 1


def _deduplicated_into_a_peers_article(tenant, make_caller):
    """agent-b's memory graduates into agent-a's article, which a curator shared."""
    text = "Deploys need a canary."
    theirs = _hot(tenant, "agent-a", text)
    shared = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=theirs.pk).article
    curator = make_caller(tenant, ApiKeyRole.USER)
    assert (
        curator.patch(
            f"/api/v1/knowledge/articles/{shared.pk}", {"version": 1, "visibility": "tenant"}
        ).status_code
        == 200
    )
    mine = _hot(tenant, "agent-b", text)
    first = memory_graduate(tenant=tenant, subject_id="agent-b", memory_id=mine.pk)
    assert (first.verdict, first.article.pk) == ("duplicate", shared.pk)
    return theirs, mine, shared


def test_graduation_after_a_peer_forgot_the_article_it_joined_graduates_again(make_caller, tenant):
    theirs, mine, shared = _deduplicated_into_a_peers_article(tenant, make_caller)
    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=theirs.pk)
    caller = make_caller(tenant, agent_id="agent-b")

    response = caller.post(GRADUATE, {"memory_id": str(mine.pk)})

    mine.refresh_from_db()
    article = Article.objects.get(tenant=tenant)
    assert (response.status_code, response.json()["data"]["verdict"]) == (201, "created")
    assert response.json()["data"]["article"]["id"] == str(article.pk)
    assert (article.source_memory_id, article.owner_agent_id) == (mine.pk, "agent-b")
    assert mine.graduated_article_id == article.pk
    assert article.pk != shared.pk


def test_the_sweep_graduates_a_memory_whose_article_a_peer_forgot(make_caller, tenant):
    theirs, mine, _shared = _deduplicated_into_a_peers_article(tenant, make_caller)
    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=theirs.pk)

    sweep = memory_graduation_sweep()

    mine.refresh_from_db()
    assert (sweep.considered, sweep.graduated, sweep.errors) == (1, 1, 0)
    assert Article.objects.get(tenant=tenant).source_memory_id == mine.pk
    assert mine.graduated_article_id is not None
