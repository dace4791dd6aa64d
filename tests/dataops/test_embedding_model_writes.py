"""Every vector records the model that made it: each write path stamps ``embedding_model``
with the fingerprint of the tenant's provider configuration at the time, and an export and
import carries it."""

import json

from apps.extraction.promotion.types import Candidate
from apps.knowledge.services import (
    ArticleChanges,
    article_backfill_embeddings,
    article_update,
    propose_article,
)
from apps.knowledge.viewer import Viewer
from apps.memory.models import Memory
from apps.memory.services import (
    MemoryDraft,
    memory_backfill_embeddings,
    memory_drain_embeddings,
    memory_embed_now,
    memory_remember,
    promotion_persist,
)
from apps.providers.embeddings import EmbeddingConfig
from apps.tenancy.selectors import tenant_embedding_fingerprint
from tests.dataops.helpers import run_json, wipe
from tests.knowledge.helpers import CURATOR, publish
from tests.memory.helpers import remember

DEFAULT = EmbeddingConfig.default().fingerprint


def _switch(tenant, model="model-b"):
    tenant.embedding_provider = "fake"
    tenant.embedding_config = {"model": model}
    tenant.save()
    return tenant_embedding_fingerprint(tenant=tenant)


def _model(row):
    return type(row).objects.get(pk=row.pk).embedding_model


def test_the_fingerprint_names_endpoint_model_and_dimension_never_the_key_or_owner():
    base = EmbeddingConfig(provider="openai", model="m", base_url="http://x/v1")
    assert len(base.fingerprint) == 16
    assert (
        EmbeddingConfig(
            provider="openai", model="m", base_url="http://x/v1", api_key="k", owner="t"
        ).fingerprint
        == base.fingerprint
    )
    assert EmbeddingConfig(provider="openai", model="n", base_url="http://x/v1").fingerprint != (
        base.fingerprint
    )
    # The deployment's dimension is what an unset one means.
    assert (
        EmbeddingConfig(
            provider="openai", model="m", base_url="http://x/v1", dimensions=384
        ).fingerprint
        == base.fingerprint
    )


def test_the_drain_the_backfill_and_embed_now_stamp_the_tenants_model(tenant):
    drained = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="drained"))
    memory_drain_embeddings(tenant_id=tenant.pk)
    theirs = _switch(tenant)
    backfilled = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="late"))
    memory_backfill_embeddings()
    now = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="now"))
    memory_embed_now(memories=[now])

    assert _model(drained) == DEFAULT
    assert _model(backfilled) == _model(now) == theirs != DEFAULT


def test_a_pending_row_names_no_model(tenant):
    pending = remember(tenant, "a", "not yet", embed=False)

    assert _model(pending) == ""


def test_promotion_stamps_the_vectors_it_embeds_first(tenant):
    theirs = _switch(tenant)

    promotion_persist(
        tenant=tenant,
        subject_id="a",
        session_id="s",
        candidates=[Candidate(text="The user deploys on Fridays.", confidence=1.0)],
    )

    assert set(Memory.objects.filter(tenant=tenant).values_list("embedding_model", flat=True)) == {
        theirs
    }


def test_articles_are_stamped_by_the_gate_the_embedding_task_and_an_agents_edit(tenant):
    agent = Viewer.for_subject("agent-a")
    gated = propose_article(
        tenant=tenant, viewer=CURATOR, title="Gated", body="Through the gate.", category="finding"
    ).article
    owned = propose_article(
        tenant=tenant,
        viewer=agent,
        title="Owned",
        body="The agent's own article.",
        category="finding",
    ).article
    theirs = _switch(tenant)
    pending = publish(tenant, "Pending", "Embedded by the backfill.", embed=False)
    article_backfill_embeddings()
    edited = article_update(
        tenant=tenant,
        viewer=agent,
        article_id=owned.pk,
        version=owned.version,
        changes=ArticleChanges(body="A new body, checked by the gate."),
    )

    assert _model(gated) == DEFAULT
    assert _model(pending) == theirs
    assert edited.embedding is not None
    assert _model(edited) == theirs


def test_reembed_stamps_the_new_model(tenant):
    memory = remember(tenant, "a", "A fact.")
    article = publish(tenant, "Title", "Body.")
    theirs = _switch(tenant)

    run_json("reembed", "--tenant", tenant.slug)

    assert _model(memory) == _model(article) == theirs


def test_an_export_carries_the_model_and_an_import_keeps_it(tenant, tmp_path):
    theirs = _switch(tenant)
    memory = remember(tenant, "a", "A fact.")
    article = publish(tenant, "Title", "Body.")
    path = tmp_path / "export.jsonl"
    run_json("memory_export", "--tenant", tenant.slug, "--output", str(path))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert {r["embedding_model"] for r in records if r.get("type") in {"memory", "article"}} == {
        theirs
    }
    wipe(tenant)

    run_json("memory_import", "--tenant", tenant.slug, "--input", str(path))

    assert _model(memory) == _model(article) == theirs


def test_an_old_export_imports_its_vectors_as_of_an_unknown_model(tenant, tmp_path):
    memory = remember(tenant, "a", "A fact.")
    path = tmp_path / "export.jsonl"
    run_json("memory_export", "--tenant", tenant.slug, "--output", str(path))
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        record.pop("embedding_model", None)
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    wipe(tenant)

    run_json("memory_import", "--tenant", tenant.slug, "--input", str(path))

    restored = Memory.objects.get(pk=memory.pk)
    assert restored.embedding is not None
    assert restored.embedding_model == ""


def test_an_import_that_drops_vectors_drops_their_model(tenant, tmp_path):
    memory = remember(tenant, "a", "A fact.")
    path = tmp_path / "export.jsonl"
    run_json("memory_export", "--tenant", tenant.slug, "--output", str(path))
    wipe(tenant)

    run_json("memory_import", "--tenant", tenant.slug, "--input", str(path), "--drop-embeddings")

    restored = Memory.objects.get(pk=memory.pk)
    assert (restored.embedding, restored.embedding_model) == (None, "")
