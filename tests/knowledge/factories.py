"""Knowledge rows written directly, for tests that read them. Tests about writing articles
(the novelty gate, curation, versions) use the services (``tests.knowledge.helpers.publish``).
"""

from __future__ import annotations

from django.utils import timezone
from factory.declarations import LazyAttribute, Sequence, SubFactory, Trait
from factory.django import DjangoModelFactory

from apps.knowledge.models import (
    Article,
    ArticleCategory,
    ArticleSource,
    ArticleStatus,
    ArticleVisibility,
)
from apps.knowledge.services import article_embedding_text
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.selectors import tenant_embedding_fingerprint
from tests.providers.vectors import fake_provider_vector
from tests.tenancy.factories import TenantFactory


class ArticleFactory(DjangoModelFactory[Article]):
    """A published, tenant-visible article, pending (no vector) unless ``embedded=True``.

    ``embedded=True`` stores the fake provider's unit vector of the text the service embeds
    (title, then body), so search ranks it as it ranks a service-embedded article. A draft or
    archived ``status`` gets no ``published_at``; ``visibility=OWNER`` needs an
    ``owner_agent_id`` (a database constraint).
    """

    class Meta:
        model = Article

    class Params:
        embedded = Trait(
            embedding=LazyAttribute(
                lambda o: fake_provider_vector(article_embedding_text(title=o.title, body=o.body))
            )
        )

    tenant = SubFactory(TenantFactory)
    # Sequences rather than Faker: titles are unique per namespace (case-insensitively).
    title = Sequence(lambda n: f"Article {n}")
    body = LazyAttribute(lambda o: f"The body of {o.title}.")
    category = ArticleCategory.FINDING
    status = ArticleStatus.PUBLISHED
    visibility = ArticleVisibility.TENANT
    source = ArticleSource.MANUAL
    embedding_content_hash = LazyAttribute(lambda o: embedding_content_hash(o.body))
    embedding = None
    embedded_at = LazyAttribute(lambda o: None if o.embedding is None else timezone.now())
    # The tenant's current model, as every vector write stamps it (an explicit value puts the
    # row in another model's space, as a vector written before a model change is).
    embedding_model = LazyAttribute(
        lambda o: "" if o.embedding is None else tenant_embedding_fingerprint(tenant=o.tenant)
    )
    published_at = LazyAttribute(
        lambda o: timezone.now() if o.status == ArticleStatus.PUBLISHED else None
    )
