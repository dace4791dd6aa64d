"""memory_bench's load over several connections writes what one COPY writes."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Count

from apps.memory.models import Memory
from apps.tenancy.services import tenant_create
from lab import memory_bench

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def _live_counts(tenant):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT subject_id, live FROM memory_scope_usage WHERE tenant_id = %s", [tenant.pk]
        )
        return dict(cursor.fetchall())


@pytest.mark.parametrize("workers", [1, 3])
def test_a_load_writes_every_subjects_rows_once_with_their_postings_and_counts(workers):
    tenant = tenant_create(slug=f"bench-load-{workers}", name="load")
    corpus = memory_bench.Corpus.plan(memory_bench.CorpusSpec(rows=240, subjects=7, dims=384))

    timings = memory_bench.bulk_load(tenant=tenant, corpus=corpus, workers=workers)

    expected = dict(zip(corpus.subject_ids, (int(size) for size in corpus.sizes), strict=True))
    rows = Memory.objects.filter(tenant=tenant).values("subject_id").annotate(n=Count("id"))
    assert timings.rows == sum(expected.values())
    assert {row["subject_id"]: row["n"] for row in rows} == expected
    assert _live_counts(tenant) == expected
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(DISTINCT memory_id) FROM memory_search_term WHERE tenant_id = %s",
            [tenant.pk],
        )
        assert cursor.fetchone() == (sum(expected.values()),)
    assert timings.index_rows >= sum(expected.values())
