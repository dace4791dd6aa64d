"""The background model migration (apps/dataops/services/migration.py): after a tenant's model
changes, a bounded, resumable run re-embeds its old model's rows oldest first, while recall
keeps answering from the rows of the query's model and finds the others by their words; its
progress shows in ``reembed --status`` and on /metrics."""

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management.base import CommandError
from django.db import connections
from rest_framework.test import APIClient

from apps.dataops.selectors import embedding_migration_status
from apps.dataops.services import embeddings_migrate, tenants_to_migrate
from apps.dataops.tasks import migrate_embeddings_task
from apps.knowledge.models import Article
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from apps.providers.embedders.fake import FAIL_MARKER
from apps.providers.embeddings import EmbeddingConfig, embed_texts
from apps.tenancy.selectors import tenant_embedding_fingerprint
from tests.dataops.helpers import run, run_json
from tests.knowledge.helpers import publish
from tests.memory.factories import MemoryFactory
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

OLD = EmbeddingConfig.default().fingerprint
NEW_CONFIG = EmbeddingConfig(provider="fake", model="model-b")


@pytest.fixture(autouse=True)
def _small_batches(settings):
    settings.EMBEDDING_BATCH_SIZE = 2


def _old_store(tenant, count, subject="agent-a"):
    """``count`` memories embedded by the deployment's (old) model, one second apart."""
    rows = []
    for n in range(count):
        row = MemoryFactory.create(
            tenant=tenant, subject_id=subject, text=f"Fact number {n} about deploys.", embedded=True
        )
        Memory.objects.filter(pk=row.pk).update(created_at=row.created_at.replace(second=n % 60))
        rows.append(row)
    return rows


def _switch(tenant):
    tenant.embedding_provider = "fake"
    tenant.embedding_config = {"model": "model-b"}
    tenant.save()
    return tenant_embedding_fingerprint(tenant=tenant)


def _models(tenant):
    return dict(Memory.objects.filter(tenant=tenant).values_list("pk", "embedding_model"))


def test_a_tenant_on_its_current_model_has_nothing_to_migrate(tenant):
    _old_store(tenant, 3)

    assert tenants_to_migrate() == []
    assert embeddings_migrate().tenants == 0


def test_a_run_moves_a_bounded_number_of_the_oldest_rows_to_the_new_model(tenant):
    rows = _old_store(tenant, 7)
    new = _switch(tenant)

    run_ = embeddings_migrate(max_rows=4)

    assert (run_.tenants, run_.memories) == (1, 4)
    oldest_first = sorted(
        Memory.objects.filter(tenant=tenant), key=lambda row: (row.created_at, row.pk)
    )
    assert [row.embedding_model for row in oldest_first] == [new] * 4 + [OLD] * 3
    moved = oldest_first[0]
    expected = embed_texts(NEW_CONFIG, [moved.text])[0]
    assert np.allclose(np.asarray(moved.embedding), expected, atol=1e-6)
    assert len(rows) == 7


def test_runs_continue_until_every_row_and_article_is_on_the_new_model(tenant):
    _old_store(tenant, 5)
    article = publish(tenant, "Deploys", "Deploys happen on Thursdays.")
    new = _switch(tenant)

    for _ in range(5):
        migrate_embeddings_task.apply()

    assert set(_models(tenant).values()) == {new}
    assert Article.objects.get(pk=article.pk).embedding_model == new
    assert tenants_to_migrate() == []
    assert embeddings_migrate().memories == 0


def test_tenants_share_a_run_fairly(tenant):
    other = TenantFactory.create()
    _old_store(tenant, 6)
    _old_store(other, 6)
    _switch(tenant)
    _switch(other)

    run_ = embeddings_migrate(max_rows=4)

    assert run_.memories == 4
    for owner in (tenant, other):
        assert list(_models(owner).values()).count(OLD) == 4


def test_an_outage_keeps_what_was_written_and_the_next_run_carries_on(tenant):
    rows = _old_store(tenant, 6)
    broken = rows[3]  # the second batch (rows 2 and 3) fails at the provider
    Memory.objects.filter(pk=broken.pk).update(text=f"{broken.text} {FAIL_MARKER}")
    new = _switch(tenant)

    interrupted = embeddings_migrate(max_rows=100)

    assert interrupted.memories == 2
    assert str(tenant.pk) in interrupted.unavailable
    models = _models(tenant)
    assert [models[row.pk] for row in rows] == [new, new, OLD, OLD, OLD, OLD]

    Memory.objects.filter(pk=broken.pk).update(text=broken.text)
    resumed = embeddings_migrate(max_rows=100)

    assert resumed.memories == 4  # only what was left
    assert set(_models(tenant).values()) == {new}


def test_recall_answers_throughout_and_ranks_only_the_querys_model(tenant):
    rows = _old_store(tenant, 6)
    new = _switch(tenant)
    ids = {row.pk for row in rows}

    while True:
        semantic = memory_recall(
            tenant=tenant, subject_id="agent-a", query="deploys", mode="semantic", limit=10
        )
        hybrid = memory_recall(tenant=tenant, subject_id="agent-a", query="deploys", limit=10)
        models = _models(tenant)
        migrated = {pk for pk, model in models.items() if model == new}
        # The vector leg ranks exactly the migrated rows; hybrid still finds every row.
        assert {hit.memory.pk for hit in semantic.results} == migrated
        assert {hit.memory.pk for hit in hybrid.results} == ids
        assert all(
            (hit.similarity is None) == (hit.memory.pk not in migrated) for hit in hybrid.results
        )
        if migrated == ids:
            break
        assert embeddings_migrate(max_rows=2).memories == 2


def test_reembed_status_shows_rows_per_model_and_what_is_left(tenant):
    _old_store(tenant, 5)
    MemoryFactory.create(tenant=tenant, text="Not embedded yet.")
    new = _switch(tenant)
    embeddings_migrate(max_rows=2)

    data = run_json("reembed", "--status", "--tenant", tenant.slug)
    human = run("reembed", "--status")

    (status,) = data["tenants"]
    assert status["current_model"]["fingerprint"] == new
    assert status["current_model"]["label"].startswith("fake||model-b|")
    assert [(m["fingerprint"], m["current"], m["memories"]) for m in status["models"]] == [
        (new, True, 2),
        (OLD, False, 3),
    ]
    assert status["pending"] == {"memories": 1, "articles": 0}
    assert status["remaining"] == {"memories": 3, "articles": 0}
    assert data["migrated"] is False
    assert f"{tenant.slug}: current model fake||model-b|" in human
    assert "3 memories and 0 articles to re-embed" in human

    embeddings_migrate()
    assert run_json("reembed", "--status", "--tenant", tenant.slug)["migrated"] is True


def test_metrics_report_rows_per_model_and_the_rows_left(tenant):
    _old_store(tenant, 3)
    new = _switch(tenant)
    embeddings_migrate(max_rows=2)
    cache.clear()

    text = APIClient().get("/metrics").content.decode()

    slug = tenant.slug
    rows = "engram_embedding_rows"
    assert f'{rows}{{current="1",kind="memory",model="{new}",tenant="{slug}"}} 2.0' in text
    assert f'{rows}{{current="0",kind="memory",model="{OLD}",tenant="{slug}"}} 1.0' in text
    left = "engram_embedding_migration_remaining_rows"
    assert f'{left}{{kind="memory",tenant="{slug}"}} 1.0' in text


def test_the_status_names_a_vector_of_unknown_model(tenant):
    row = MemoryFactory.create(tenant=tenant, text="From an old export.", embedded=True)
    Memory.objects.filter(pk=row.pk).update(embedding_model="")

    (status,) = embedding_migration_status(tenant=tenant)

    assert [(m.fingerprint, m.label, m.current) for m in status.models] == [("", "unknown", False)]
    assert tenants_to_migrate() == [tenant]


def test_a_tenant_a_reembed_holds_is_skipped_this_run(tenant):
    _old_store(tenant, 3)
    _switch(tenant)
    other = connections.create_connection("default")
    key = [f"reembed:{tenant.pk}"]
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", key)
        held = embeddings_migrate()
        # Released before the next run: a closed session's locks go only when its backend
        # has exited, which a loaded server can leave until after the next statement.
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", key)
    finally:
        other.close()

    assert (held.busy, held.memories) == ([tenant.slug], 0)
    assert embeddings_migrate().memories == 3


def test_zero_rows_per_run_turns_the_migration_off(tenant, settings):
    settings.EMBEDDING_MIGRATION_ROWS_PER_RUN = 0
    _old_store(tenant, 3)
    _switch(tenant)

    assert embeddings_migrate().memories == 0
    assert set(_models(tenant).values()) == {OLD}


def test_reembed_without_a_tenant_or_status_is_refused():
    with pytest.raises(CommandError, match="--tenant is required"):
        run("reembed")
