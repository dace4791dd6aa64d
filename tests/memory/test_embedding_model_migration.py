"""Migrations memory 0035 and knowledge 0010 on rows embedded before vectors named their model:
each embedded row is stamped with its tenant's current model (its own provider's, else the
deployment default's), in batches; a pending row stays unstamped."""

import importlib
from types import SimpleNamespace

import pytest
from django.db import connection

from apps.knowledge.models import Article
from apps.memory.models import Memory
from apps.providers.embeddings import EmbeddingConfig
from apps.tenancy.selectors import tenant_embedding_fingerprint
from tests.knowledge.factories import ArticleFactory
from tests.memory.factories import MemoryFactory
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

helper = importlib.import_module("apps.tenancy.migrations._embedding_models")
memory_backfill = importlib.import_module(
    "apps.memory.migrations.0035_memory_embedding_model_backfill"
)
article_backfill = importlib.import_module(
    "apps.knowledge.migrations.0010_article_embedding_model_backfill"
)


def test_the_backfill_stamps_each_tenants_vectors_with_its_current_model(monkeypatch):
    monkeypatch.setattr(helper, "BATCH_SIZE", 2)  # several batches
    default_tenant = TenantFactory.create()
    own = TenantFactory.create(
        embedding_provider="fake", embedding_config={"model": "tenant-model"}
    )
    embedded = [MemoryFactory.create(tenant=default_tenant, embedded=True) for _ in range(3)]
    pending = MemoryFactory.create(tenant=default_tenant)
    theirs = [MemoryFactory.create(tenant=own, embedded=True) for _ in range(2)]
    article = ArticleFactory.create(tenant=own, embedded=True)
    Memory.objects.update(embedding_model="")
    Article.objects.update(embedding_model="")

    memory_backfill.backfill(None, SimpleNamespace(connection=connection))
    article_backfill.backfill(None, SimpleNamespace(connection=connection))

    models = dict(Memory.objects.values_list("pk", "embedding_model"))
    default = EmbeddingConfig.default().fingerprint
    assert {models[row.pk] for row in embedded} == {default}
    assert models[pending.pk] == ""
    mine = tenant_embedding_fingerprint(tenant=own)
    assert mine != default
    assert {models[row.pk] for row in theirs} == {mine}
    assert Article.objects.get(pk=article.pk).embedding_model == mine


def test_a_rerun_leaves_stamped_rows_alone(tenant):
    row = MemoryFactory.create(tenant=tenant, embedded=True)
    Memory.objects.filter(pk=row.pk).update(embedding_model="0123456789abcdef")

    memory_backfill.backfill(None, SimpleNamespace(connection=connection))

    assert Memory.objects.get(pk=row.pk).embedding_model == "0123456789abcdef"
