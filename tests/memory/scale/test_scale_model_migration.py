"""Scale (issue #33, "Online model migration"): a store of 50k memories embedded by one model
moves to another by the background migration while recall keeps answering.

The store is loaded on ``memory_bench``'s fast path (binary COPY, indexes rebuilt after), every
vector stamped as made by the deployment's model; then the tenant's model changes (the fake
provider under another model name: unrelated vectors, as two real models give). Beat runs are
played back to back while a second thread recalls random subjects: no recall fails, none comes
back empty for a subject that has memories, and no hit is ever scored by a vector of the old
model. Halfway the runs stop (as if the worker died) and the next ones carry on from the rows
that are left.

Run with ``make test-scale`` (``pytest -m scale``). The loader commits, so the test is
transactional and Django flushes the tables afterwards.
"""

from __future__ import annotations

import random
import threading
import time

import pytest
from django.db import connections
from typing_extensions import override

from apps.dataops.selectors import embedding_migration_status
from apps.dataops.services import embeddings_migrate, tenants_to_migrate
from apps.memory.selectors import memory_recall
from apps.providers.embeddings import EmbeddingConfig
from apps.tenancy.selectors import tenant_embedding_fingerprint
from lab import memory_bench as benchmarking

pytestmark = [
    pytest.mark.scale,
    pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"]),
]

ROWS = 50_000
SUBJECTS = 500  # 100 rows each
BATCH = 250
ROWS_PER_RUN = 5_000
# Between two recalls: a steady load (~30 recalls/s) rather than one that takes the migration's
# CPU on a 2-core machine.
RECALL_PAUSE_S = 0.03
QUERY = "synthetic memory about topic"


class _Recaller(threading.Thread):
    """Recalls random subjects until told to stop, one every ``RECALL_PAUSE_S``, recording what
    it saw."""

    def __init__(self, tenant, subjects: list[str], new_model: str) -> None:
        super().__init__(daemon=True)
        self.tenant, self.subjects, self.new_model = tenant, subjects, new_model
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.recalls = 0
        self.semantic_hits = 0
        self.keyword_only_hits = 0

    @override
    def run(self) -> None:
        chooser = random.Random(7)
        try:
            while not self.stop.wait(RECALL_PAUSE_S):
                subject = chooser.choice(self.subjects)
                try:
                    result = memory_recall(
                        tenant=self.tenant, subject_id=subject, query=QUERY, limit=10
                    )
                except Exception as exc:  # the in-process equivalent of a 5xx
                    self.errors.append(f"{subject}: {type(exc).__name__}: {exc}")
                    continue
                self.recalls += 1
                if not result.results:
                    self.errors.append(f"{subject}: empty answer")
                for hit in result.results:
                    if hit.memory.subject_id != subject:
                        self.errors.append(f"{subject}: another subject's row")
                    if hit.similarity is None:
                        self.keyword_only_hits += 1
                    elif hit.memory.embedding_model != self.new_model:
                        self.errors.append(f"{subject}: scored by an old vector")
                    else:
                        self.semantic_hits += 1
        finally:
            connections.close_all()


def _migrate(runs: int) -> tuple[int, float]:
    moved, started = 0, time.perf_counter()
    for _ in range(runs):
        run = embeddings_migrate(max_rows=ROWS_PER_RUN)
        assert not run.unavailable
        assert not run.busy
        moved += run.memories
    return moved, time.perf_counter() - started


def test_a_50k_store_moves_to_a_new_model_while_recall_answers(tenant, settings):
    # The recall bump would UPDATE hits from a background thread while Django flushes.
    settings.MEMORY_RECALL_BUMP_MIN_SCORE = 2.0
    settings.EMBEDDING_BATCH_SIZE = BATCH
    old = EmbeddingConfig.default().fingerprint
    corpus = benchmarking.Corpus.plan(
        benchmarking.CorpusSpec(
            rows=ROWS, subjects=SUBJECTS, dims=settings.EMBEDDING_DIMENSIONS, seed=33
        )
    )
    started = time.perf_counter()
    timings = benchmarking.bulk_load(tenant=tenant, corpus=corpus, embedding_model=old)
    load_s = time.perf_counter() - started
    assert timings.rows == ROWS

    tenant.embedding_provider = "fake"
    tenant.embedding_config = {"model": "model-b"}
    tenant.save()
    new = tenant_embedding_fingerprint(tenant=tenant)
    assert new != old
    assert tenants_to_migrate() == [tenant]

    recaller = _Recaller(tenant, list(corpus.subject_ids), new)
    recaller.start()
    try:
        # Half the runs, then the worker "dies": what they wrote stays written.
        first, first_s = _migrate(ROWS // ROWS_PER_RUN // 2)
        (halfway,) = embedding_migration_status(tenant=tenant)
        assert halfway.remaining_memories == ROWS - first
        assert first == ROWS // 2
        # A new worker carries on from the rows that are left.
        rest, rest_s = _migrate(ROWS // ROWS_PER_RUN - ROWS // ROWS_PER_RUN // 2)
        time.sleep(0.5)  # a few recalls on the migrated store
    finally:
        recaller.stop.set()
        recaller.join(timeout=60)

    (done,) = embedding_migration_status(tenant=tenant)
    print(  # noqa: T201 - the figures are worth seeing in a scale run
        f"\nloaded {ROWS} rows in {load_s:.1f} s; migrated {first + rest} rows in "
        f"{first_s + rest_s:.1f} s ({(first + rest) / (first_s + rest_s):,.0f} rows/s, "
        f"{ROWS_PER_RUN} rows a run, {BATCH} a provider call); {recaller.recalls} recalls "
        f"meanwhile, {recaller.semantic_hits} hits scored by the new model, "
        f"{recaller.keyword_only_hits} by their words alone"
    )
    assert recaller.errors == []
    assert recaller.recalls >= 20
    assert recaller.semantic_hits > 0
    assert recaller.keyword_only_hits > 0
    assert first + rest == ROWS
    assert done.migrated
    assert [(m.fingerprint, m.memories) for m in done.models] == [(new, ROWS)]
    assert tenants_to_migrate() == []
