"""Today's default model to the other bundled one, for real: a store embedded by
all-MiniLM-L6-v2 moves to bge-small-en-v1.5 when the deployment's ``LOCAL_EMBEDDING_MODEL``
changes, while recall answers, and a deployment that names its model stays put."""

from pathlib import Path

import pytest

from apps.dataops.selectors import embedding_migration_status
from apps.dataops.services import embeddings_migrate, tenants_to_migrate
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_drain_embeddings, memory_remember
from apps.providers.embeddings import EmbeddingConfig

pytestmark = pytest.mark.django_db

FACTS = [
    "The user prefers a dark theme in the editor.",
    "Deploys to production happen on Thursdays.",
    "The staging database is refreshed every Monday night.",
    "Maria leads the payments team.",
]
PROVIDERS = (
    Path(__file__).resolve().parents[2] / "config" / "settings" / "components" / "providers.py"
)
PARAPHRASE = "Which colour scheme does the user like for their IDE?"


@pytest.fixture
def minilm_store(settings, tenant):
    settings.EMBEDDING_PROVIDER = "local"
    settings.LOCAL_EMBEDDING_MODEL = "minilm"
    for text in FACTS:
        memory_remember(tenant=tenant, subject_id="agent-a", draft=MemoryDraft(text=text))
    memory_drain_embeddings(tenant_id=tenant.pk)
    return EmbeddingConfig.default().fingerprint


def _semantic(tenant):
    return memory_recall(tenant=tenant, subject_id="agent-a", query=PARAPHRASE, mode="semantic")


def test_a_minilm_store_moves_to_bge_small_while_recall_answers(settings, tenant, minilm_store):
    assert _semantic(tenant).results[0].memory.text == FACTS[0]

    settings.LOCAL_EMBEDDING_MODEL = "bge-small"
    bge = EmbeddingConfig.default().fingerprint
    assert bge != minilm_store
    assert tenants_to_migrate() == [tenant]
    # Mid-change: nothing is compared across models; the words still find the rows.
    assert _semantic(tenant).results == []
    by_words = memory_recall(tenant=tenant, subject_id="agent-a", query="dark theme editor")
    assert by_words.results[0].memory.text == FACTS[0]
    assert by_words.results[0].similarity is None

    run = embeddings_migrate()

    assert run.memories == len(FACTS)
    assert set(Memory.objects.filter(tenant=tenant).values_list("embedding_model", flat=True)) == {
        bge
    }
    (status,) = embedding_migration_status(tenant=tenant)
    assert status.migrated
    assert status.label == "local||bge-small-en-v1.5-onnx-int8|384"
    top = _semantic(tenant).results[0]
    assert top.memory.text == FACTS[0]
    assert top.similarity is not None


def test_a_deployment_that_names_its_model_keeps_it_when_the_default_in_code_changes(
    monkeypatch,
):
    # The settings fragment as a release that moved the default would ship it.
    source = PROVIDERS.read_text()
    assert source.count('"ENGRAM_LOCAL_EMBEDDING_MODEL", default="minilm"') == 1
    moved = source.replace(
        '"ENGRAM_LOCAL_EMBEDDING_MODEL", default="minilm"',
        '"ENGRAM_LOCAL_EMBEDDING_MODEL", default="bge-small"',
    )

    def settings_with(environment: dict[str, str]) -> str:
        monkeypatch.delenv("ENGRAM_LOCAL_EMBEDDING_MODEL", raising=False)
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        namespace: dict[str, object] = {}
        exec(compile(moved, str(PROVIDERS), "exec"), namespace)  # noqa: S102 - our own file
        return str(namespace["LOCAL_EMBEDDING_MODEL"])

    assert settings_with({}) == "bge-small"  # unpinned: follows the new default
    assert settings_with({"ENGRAM_LOCAL_EMBEDDING_MODEL": "minilm"}) == "minilm"  # pinned
