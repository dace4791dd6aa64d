"""One fact through every path (explicit memory, session turns promoted, graduated article,
merged recall history), then forget or erasure: no read path returns it, and re-promoting the
changed session does not bring it back."""

import json

import pytest
from django.core.management import call_command

from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending, promotion_request, promotion_run
from tests.knowledge.helpers import break_embeddings
from tests.memory.promotion_pipeline.conftest import add_turns, fact

FACT = "Maria takes twelve units of insulin at breakfast."
WORDS = ("insulin", "twelve units")
SESSION = "clinic-1"
QUERY = "insulin units breakfast"


def _promote(tenant):
    request = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)
    assert request.enqueued, request.reason
    promotion_run(job_id=request.job_id)


def _seed(tenant, agent, promoter):
    explicit = agent.post("/api/v1/memory", {"text": FACT + " (told directly)"})
    assert explicit.status_code == 201
    memory_embed_pending(memory_ids=[explicit.json()["data"]["id"]])
    add_turns(tenant, "agent-a", SESSION, "Maria takes 12 units of insulin at breakfast", "Ok.")
    promoter.says(fact(FACT, confidence=0.9))
    _promote(tenant)
    promoted = Memory.objects.get(tenant=tenant, source="promoted")
    graduated = agent.post("/api/v1/memory/graduate", {"memory_id": str(promoted.pk)})
    assert graduated.status_code == 201, graduated.json()
    recall = agent.post("/api/v1/recall", {"query": QUERY, "session_id": SESSION})
    assert recall.status_code == 200
    return explicit.json()["data"]["id"], str(promoted.pk)


def _exported(tenant, tmp_path):
    path = tmp_path / "export.jsonl"
    call_command("memory_export", "--tenant", tenant.slug, "--output", str(path), "--json")
    return path.read_text(encoding="utf-8")


def _reads(tenant, agent, tmp_path):
    """Every read path an agent (and an operator's export) has, as text."""
    bodies = [
        agent.post("/api/v1/memory/recall", {"query": QUERY, "mode": mode}).json()
        for mode in ("semantic", "keyword", "hybrid")
    ]
    bodies += [
        agent.post("/api/v1/memory/recall", {"query": QUERY}).json(),
        agent.get("/api/v1/memory?include_superseded=true").json(),
        agent.get(f"/api/v1/memory/sessions/{SESSION}").json(),
        agent.post("/api/v1/knowledge/search", {"query": QUERY}).json(),
        agent.get("/api/v1/knowledge/context", data={"query": QUERY}).json(),
        agent.get("/api/v1/knowledge/articles").json(),
        agent.post("/api/v1/recall", {"query": QUERY, "session_id": SESSION}).json(),
    ]
    texts = {"api": json.dumps(bodies), "export": _exported(tenant, tmp_path)}
    break_embeddings(tenant)  # the text fallback of recall
    texts["fallback"] = json.dumps(
        [
            agent.post("/api/v1/memory/recall", {"query": QUERY}).json(),
            agent.post("/api/v1/recall", {"query": QUERY}).json(),
        ]
    )
    tenant.embedding_provider = ""
    tenant.embedding_config = {}
    tenant.save()
    return texts


def _mentions(texts):
    return {where: [w for w in WORDS if w in text.lower()] for where, text in texts.items()}


def test_forget_removes_the_fact_from_every_memory_read_and_re_promotion(
    tenant, agent, promoter, tmp_path
):
    explicit_id, promoted_id = _seed(tenant, agent, promoter)
    before = _mentions(_reads(tenant, agent, tmp_path))
    assert all(before.values()), before  # the probe can see the fact

    for memory_id in (explicit_id, promoted_id):
        assert agent.delete(f"/api/v1/memory/{memory_id}").status_code == 204
    # The session changes and is promoted again: the compiler extracts the same fact.
    add_turns(tenant, "agent-a", SESSION, "See you tomorrow.", "Bye.")
    promoter.says(fact(FACT, confidence=0.9))
    _promote(tenant)

    assert not Memory.objects.filter(tenant=tenant).exists()
    texts = _reads(tenant, agent, tmp_path)
    # Forget is about memory: the session turns the agent wrote are its own (erase removes
    # them, or the session delete endpoints); every other read is clean.
    session = agent.get(f"/api/v1/memory/sessions/{SESSION}").json()
    texts["api"] = texts["api"].replace(json.dumps(session), "")
    texts["export"] = "\n".join(
        line for line in texts["export"].splitlines() if '"session_turn"' not in line
    )
    assert _mentions(texts) == {"api": [], "export": [], "fallback": []}


@pytest.mark.parametrize("_case", ["api", "command"])
def test_erasure_removes_the_fact_from_every_read_path(tenant, agent, promoter, tmp_path, _case):
    _seed(tenant, agent, promoter)

    if _case == "api":
        response = agent.post("/api/v1/memory/erase", {})
        assert response.json()["data"]["verified"] is True
    else:
        call_command(
            "erase_subject", "--tenant", tenant.slug, "--subject", "agent-a", "--json", "--yes"
        )

    assert _mentions(_reads(tenant, agent, tmp_path)) == {"api": [], "export": [], "fallback": []}
