"""Synthetic long-term memories at scale, for ``memory_bench`` and the scale test.

One loader serves both: a throwaway tenant's rows are streamed into ``memory_memory`` with a
binary ``COPY`` (psycopg 3 + pgvector's binary dumper) while the partial HNSW index is
absent, and the index is rebuilt once afterwards, which is several times faster than
maintaining the graph row by row.

The vectors are structured like text embeddings rather than uniform noise, so the kNN
answer is not trivial: a few hundred topic centroids, each with subtopic directions around
it (cosine ``SUBTOPIC_COSINE`` to its topic), and every row a point around one subtopic
(cosine ``ROW_COSINE`` to it). Each subject writes about a handful of topics, and topics are
shared between subjects, so the rows nearest to a subject's query mostly belong to *other*
subjects: exactly the case where filtering an ANN pool by subject underfills.

Nothing here is used on a request path.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connections, transaction
from django.test.utils import override_settings
from django.utils import timezone
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

from apps.core.db.routers import PRIMARY
from apps.core.vectors import vector_literal
from apps.memory.models import Memory
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_fingerprint
from lab.scratch import require_disposable_database


@dataclass(frozen=True)
class DeferredIndex:
    """An index that is expensive to maintain row by row: dropped for a bulk load and built
    once after it. Measured at 1M rows: COPY ~270 rows/s with the HNSW and covering indexes
    in place; ~14k with only the two GIN indexes left; ~21k with those deferred too."""

    name: str
    definition: str


# Migration 0003: the partial HNSW index (ANN recall). Keep in step with it.
HNSW_INDEX = DeferredIndex(
    name="memories_live_embedding_hnsw_idx",
    definition="CREATE INDEX IF NOT EXISTS memories_live_embedding_hnsw_idx "
    "ON memory_memory USING hnsw (embedding vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 64) WHERE superseded_by_id IS NULL",
)
# Migration 0036 (after 0006): the covering btree the exact scan reads (absent for very wide
# vectors). Keep in step with it.
SCOPE_VECTORS_INDEX = DeferredIndex(
    name="memory_live_scope_vectors_model_idx",
    definition="CREATE INDEX IF NOT EXISTS memory_live_scope_vectors_model_idx "
    "ON memory_memory (tenant_id, subject_id, project_id) "
    "INCLUDE (id, embedding, embedding_model) "
    "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL",
)

# The keyword postings (migration 0020), written by a statement-level trigger on the table.
SEARCH_TERM_TABLE = "memory_search_term"

DISTRIBUTIONS = ("uniform", "zipf")
DEFAULT_TOPICS = 300
SUBTOPICS_PER_TOPIC = 16
TOPICS_PER_SUBJECT = 5
# A big subject writes about more things than a typical one.
BIG_SUBJECT_TOPICS = 20
DOMAINS = 30
TOPIC_COSINE = 0.55
SUBTOPIC_COSINE = 0.75
BRIDGE_SHARE = 0.1
BRIDGE_WEIGHT = 0.6
ROW_COSINE = 0.8
QUERY_COSINE = 0.8
ZIPF_EXPONENT = 1.0
COPY_CHUNK_ROWS = 10_000
TENANT_NAME_PREFIX = "memory_bench "

ProgressFactory = Callable[[str, int], Any]


def _silent_progress(_description: str, _total: int) -> Any:
    return _NullProgress()


class _NullProgress:
    def update(self, _count: int) -> None:
        return None

    def close(self) -> None:
        return None


# ---------------------------------------------------------------------------------------------
# The corpus: who holds how many rows about what.


@dataclass(frozen=True)
class CorpusSpec:
    rows: int
    subjects: int
    dims: int
    topics: int = DEFAULT_TOPICS
    distribution: str = "uniform"
    big_subject_rows: int = 0
    # Extra subjects of these sizes, for measuring the exact-vs-ANN crossover.
    crossover_sizes: tuple[int, ...] = ()
    # A subject writing about a topic nobody else has (the scale test's needle).
    needle_rows: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.rows < self.subjects or self.subjects < 1:
            raise ValueError("need at least one row per subject")
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {DISTRIBUTIONS}")
        if self.topics < BIG_SUBJECT_TOPICS:
            raise ValueError(f"need at least {BIG_SUBJECT_TOPICS} topics")

    @property
    def total_rows(self) -> int:
        return self.rows + self.big_subject_rows + sum(self.crossover_sizes) + self.needle_rows

    def to_tenant_name(self) -> str:
        """The spec, compactly, for ``--reuse`` (a tenant name holds 200 characters)."""
        defaults = asdict(CorpusSpec(rows=1, subjects=1, dims=1))
        values = {
            key: value
            for key, value in asdict(self).items()
            if key in {"rows", "subjects", "dims"} or value != defaults[key]
        }
        return TENANT_NAME_PREFIX + json.dumps(values, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_tenant_name(cls, name: str) -> CorpusSpec:
        if not name.startswith(TENANT_NAME_PREFIX):
            raise ValueError("not a memory_bench tenant")
        values = json.loads(name[len(TENANT_NAME_PREFIX) :])
        values["crossover_sizes"] = tuple(values.get("crossover_sizes", ()))
        return cls(**values)


def subject_sizes(*, rows: int, subjects: int, distribution: str, cap: int) -> np.ndarray:
    """Rows per subject, summing to ``rows``, each ≥ 1.

    ``uniform``: as even as possible. ``zipf``: the i-th subject's share ∝ 1/(i+1)^s, capped at
    ``cap`` (the per-subject live-row quota, which no real subject can exceed), the excess
    spread over the others.
    """
    if distribution == "uniform":
        sizes = np.full(subjects, rows // subjects, dtype=np.int64)
        sizes[: rows % subjects] += 1
        return sizes
    weights = 1.0 / np.arange(1, subjects + 1, dtype=np.float64) ** ZIPF_EXPONENT
    cap = max(cap, math.ceil(rows / subjects))
    sizes = np.zeros(subjects, dtype=np.int64)
    remaining, open_mask = rows - subjects, np.ones(subjects, dtype=bool)
    sizes += 1
    while remaining > 0 and open_mask.any():
        share = weights * open_mask
        extra = np.floor(share / share.sum() * remaining).astype(np.int64)
        extra = np.minimum(extra, cap - sizes)
        if extra.sum() == 0:  # rounding left a few rows: hand them to the largest open subjects
            for index in np.flatnonzero(open_mask)[:remaining]:
                sizes[index] += 1
            break
        sizes += extra
        remaining -= int(extra.sum())
        open_mask = sizes < cap
    return sizes


def _unit(matrix: np.ndarray) -> np.ndarray:
    result: np.ndarray = matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)
    return result


def _around(base: np.ndarray, *, cosine: float, rng: np.random.Generator) -> np.ndarray:
    """Unit float32 vectors at about ``cosine`` to each unit row of ``base``.

    The noise is Gaussian with variance 1/dims per component, so its norm is ~1 and nearly
    orthogonal to ``base`` in high dimensions: one normalisation instead of two.
    """
    dims = base.shape[-1]
    noise = rng.standard_normal(base.shape, dtype=np.float32)
    noise *= np.float32(math.sqrt(1.0 - cosine * cosine) / math.sqrt(dims))
    noise += np.float32(cosine) * base
    return _unit(noise).astype(np.float32, copy=False)


class TopicSpace:
    """Domains → topics → subtopics; rows and queries are drawn around subtopics.

    Topics of one domain overlap (cosine ~0.3 between their centroids), and a share of the
    rows blend in a second topic, as real notes do ("the deploy pipeline depends on the
    billing service"). Without that continuity the space is hundreds of orthogonal islands,
    which no text embedding model produces and which HNSW cannot navigate between.
    """

    def __init__(self, *, dims: int, topics: int, seed: int) -> None:
        rng = np.random.default_rng([seed, 1])
        domains = _unit(rng.standard_normal((DOMAINS, dims), dtype=np.float32))
        self.centroids = _around(
            domains[rng.integers(0, DOMAINS, size=topics)], cosine=TOPIC_COSINE, rng=rng
        )
        self.subtopics = _around(
            np.repeat(self.centroids[:, None, :], SUBTOPICS_PER_TOPIC, axis=1),
            cosine=SUBTOPIC_COSINE,
            rng=rng,
        )

    def points(
        self,
        topics: np.ndarray,
        subtopics: np.ndarray,
        *,
        cosine: float,
        rng: np.random.Generator,
        bridges: np.ndarray | None = None,
    ) -> np.ndarray:
        """Points around the given subtopics; ``bridges[i] >= 0`` blends in that topic."""
        base = self.subtopics[topics, subtopics]
        if bridges is not None and (bridges >= 0).any():
            blended = bridges >= 0
            base[blended] = _unit(
                base[blended] + np.float32(BRIDGE_WEIGHT) * self.centroids[bridges[blended]]
            )
        return _around(base, cosine=cosine, rng=rng)


@dataclass
class Corpus:
    """The deterministic plan for a spec: subjects, their sizes and topics, the vector space."""

    spec: CorpusSpec
    subject_ids: list[str]
    sizes: np.ndarray
    topics: np.ndarray  # (subjects, BIG_SUBJECT_TOPICS); a subject uses its first topic_counts
    topic_counts: np.ndarray
    space: TopicSpace
    big_subject_id: str | None = None
    crossover_subject_ids: dict[int, str] = field(default_factory=dict)
    needle_subject_id: str | None = None

    @classmethod
    def plan(cls, spec: CorpusSpec) -> Corpus:
        rng = np.random.default_rng([spec.seed, 2])
        sizes = subject_sizes(
            rows=spec.rows,
            subjects=spec.subjects,
            distribution=spec.distribution,
            cap=settings.MEMORY_QUOTA_LIVE_ROWS,
        )
        subject_ids = [f"bench-subject-{index:06d}" for index in range(spec.subjects)]
        topic_counts = np.full(spec.subjects, TOPICS_PER_SUBJECT, dtype=np.int64)
        big_subject_id = None
        crossover_subject_ids: dict[int, str] = {}
        extra: list[tuple[str, int]] = []
        if spec.big_subject_rows:
            big_subject_id = "bench-subject-big"
            extra.append((big_subject_id, spec.big_subject_rows))
        for size in spec.crossover_sizes:
            crossover_subject_ids[size] = f"bench-subject-crossover-{size}"
            extra.append((crossover_subject_ids[size], size))
        for subject_id, size in extra:
            subject_ids.append(subject_id)
            sizes = np.append(sizes, size)
            topic_counts = np.append(topic_counts, BIG_SUBJECT_TOPICS)
        # Each subject's topics: distinct, drawn uniformly from all topics but the needle's.
        shared_topics = spec.topics - 1 if spec.needle_rows else spec.topics
        topics = np.argsort(rng.random((len(subject_ids), shared_topics)), axis=1)[
            :, :BIG_SUBJECT_TOPICS
        ]
        needle_subject_id = None
        if spec.needle_rows:
            needle_subject_id = "bench-subject-needle"
            subject_ids.append(needle_subject_id)
            sizes = np.append(sizes, spec.needle_rows)
            topic_counts = np.append(topic_counts, 1)
            topics = np.vstack([topics, np.full(BIG_SUBJECT_TOPICS, spec.topics - 1)])
        return cls(
            spec=spec,
            subject_ids=subject_ids,
            sizes=sizes,
            topics=topics,
            topic_counts=topic_counts,
            space=TopicSpace(dims=spec.dims, topics=spec.topics, seed=spec.seed),
            big_subject_id=big_subject_id,
            crossover_subject_ids=crossover_subject_ids,
            needle_subject_id=needle_subject_id,
        )

    def subject_index(self, subject_id: str) -> int:
        return self.subject_ids.index(subject_id)

    @property
    def regular_subjects(self) -> int:
        return self.spec.subjects

    def query_vectors(self, subject_indices: np.ndarray, *, seed: int) -> np.ndarray:
        """One query per subject index, near a subtopic of one of that subject's topics."""
        rng = np.random.default_rng([self.spec.seed, 3, seed])
        picks = (rng.random(len(subject_indices)) * self.topic_counts[subject_indices]).astype(
            np.int64
        )
        topics = self.topics[subject_indices, picks]
        subtopics = rng.integers(0, SUBTOPICS_PER_TOPIC, size=len(subject_indices))
        return self.space.points(topics, subtopics, cosine=QUERY_COSINE, rng=rng)

    def generate_rows(self, progress: ProgressFactory = _silent_progress) -> GeneratedRows:
        """Every row's subject, topic, subtopic and vector, in load order.

        Subjects are interleaved in a random order, as rows written over time would be, so a
        subject's rows are scattered over the heap rather than conveniently contiguous. The
        vectors are made before the load is timed: in production they come from the
        embedding provider, not from the loader.
        """
        rng = np.random.default_rng([self.spec.seed, 4])
        labels = np.repeat(np.arange(len(self.subject_ids)), self.sizes)
        rng.shuffle(labels)
        picks = (rng.random(len(labels)) * self.topic_counts[labels]).astype(np.int64)
        topics = self.topics[labels, picks]
        subtopics = rng.integers(0, SUBTOPICS_PER_TOPIC, size=len(labels))
        bridges = np.where(
            rng.random(len(labels)) < BRIDGE_SHARE,
            rng.integers(0, self.spec.topics, size=len(labels)),
            -1,
        )
        vectors = np.empty((len(labels), self.spec.dims), dtype=np.float32)
        bar = progress("generate vectors", len(labels))
        try:
            for start in range(0, len(labels), COPY_CHUNK_ROWS):
                end = start + COPY_CHUNK_ROWS
                vectors[start:end] = self.space.points(
                    topics[start:end],
                    subtopics[start:end],
                    cosine=ROW_COSINE,
                    rng=rng,
                    bridges=bridges[start:end],
                )
                bar.update(len(vectors[start:end]))
        finally:
            bar.close()
        return GeneratedRows(labels=labels, topics=topics, subtopics=subtopics, vectors=vectors)


@dataclass(frozen=True)
class GeneratedRows:
    labels: np.ndarray  # subject index per row
    topics: np.ndarray
    subtopics: np.ndarray
    vectors: np.ndarray  # (rows, dims) float32, unit length


# ---------------------------------------------------------------------------------------------
# Loading, indexing, cleaning up.


@dataclass
class LoadTimings:
    rows: int = 0
    generate_s: float = 0.0
    copy_s: float = 0.0
    index_drop_s: float = 0.0
    index_build_s: float = 0.0  # HNSW
    other_index_builds_s: dict[str, float] = field(default_factory=dict)
    index_rows: int = 0
    index_notices: list[str] = field(default_factory=list)
    vacuum_analyze_s: float = 0.0

    @property
    def load_rows_per_s(self) -> float:
        return self.rows / self.copy_s if self.copy_s else 0.0

    @property
    def index_build_rows_per_s(self) -> float:
        return self.index_rows / self.index_build_s if self.index_build_s else 0.0


# Written per row by the loader; every other column gets its model default (or NULL).
_PER_ROW_COLUMNS = (
    "id",
    "created_at",
    "updated_at",
    "tenant_id",
    "subject_id",
    "text",
    "embedding",
    "embedding_content_hash",
    "embedded_at",
    "embedding_model",
    "occurred_at",
    # Written rather than left to the table's per-row BEFORE trigger that defaults it.
    "valid_from",
)


@dataclass(frozen=True)
class _CopyLayout:
    columns: list[str]
    type_oids: list[int]
    constants: dict[str, Any]


def _copy_layout(cursor: Any) -> _CopyLayout:
    """The COPY column list, derived from the model and the live table rather than written
    out: a column another change adds (with a default) is filled, not a NOT NULL failure."""
    cursor.execute(
        "SELECT attname, atttypid FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [Memory._meta.db_table],
    )
    type_oids = {name: int(oid) for name, oid in cursor.fetchall()}
    columns: list[str] = list(_PER_ROW_COLUMNS)
    constants: dict[str, Any] = {}
    for model_field in Memory._meta.concrete_fields:
        column = model_field.column
        if not column or column in _PER_ROW_COLUMNS:
            continue
        default = model_field.get_default()
        if default is None and model_field.null:
            continue  # NULL
        columns.append(column)
        constants[column] = default
    return _CopyLayout(
        columns=columns,
        type_oids=[type_oids[column] for column in columns],
        constants=constants,
    )


def _execute(sql: str, params: Sequence[Any] | None = None) -> None:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(sql, params)


@contextmanager
def _maintenance_session() -> Iterator[None]:
    """Lift the OLTP statement timeout for bulk work (COPY, index builds, VACUUM, DELETE).

    RESET returns to the connection's own default (the timeout set at connect time).
    """
    _execute("SET statement_timeout = 0")
    try:
        yield
    finally:
        _execute("RESET statement_timeout")


def index_exists(index: DeferredIndex) -> bool:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [index.name])
        row = cursor.fetchone()
    return bool(row and row[0])


def vector_index_exists() -> bool:
    return index_exists(HNSW_INDEX)


def deferred_indexes() -> list[DeferredIndex]:
    """The indexes a bulk load drops and rebuilds: the HNSW index (created even if missing),
    the covering vectors btree where it exists, every GIN index on the table (trigram, full
    text: each row adds dozens of entries) and the keyword postings' btrees (the insert
    trigger writes about five postings a row), the latter two as the server defines them
    now."""
    indexes = [HNSW_INDEX]
    if index_exists(SCOPE_VECTORS_INDEX):
        indexes.append(SCOPE_VECTORS_INDEX)
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT index_class.relname, pg_get_indexdef(index_class.oid) "
            "FROM pg_index JOIN pg_class index_class ON index_class.oid = pg_index.indexrelid "
            "JOIN pg_am ON pg_am.oid = index_class.relam "
            "WHERE (pg_index.indrelid = %s::regclass AND pg_am.amname = 'gin') "
            "OR pg_index.indrelid = to_regclass(%s) "
            "ORDER BY index_class.relname",
            [Memory._meta.db_table, SEARCH_TERM_TABLE],
        )
        indexes += [DeferredIndex(name=name, definition=sql) for name, sql in cursor.fetchall()]
    return indexes


def drop_index(index: DeferredIndex) -> None:
    _execute(f"DROP INDEX IF EXISTS {index.name}")


def build_index(index: DeferredIndex) -> list[str]:
    """Build the index in one pass (not CONCURRENTLY: the bench owns the table meanwhile).

    Returns the server's notices, e.g. pgvector's "hnsw graph no longer fits into
    maintenance_work_mem", after which an HNSW build slows down by an order of magnitude.
    """
    connection = connections[PRIMARY]
    connection.ensure_connection()
    notices: list[str] = []

    def collect(diagnostic: Any) -> None:
        notices.append(str(diagnostic.message_primary))

    connection.connection.add_notice_handler(collect)
    try:
        _execute(index.definition)
    finally:
        connection.connection.remove_notice_handler(collect)
    return notices


def vacuum_analyze() -> None:
    # VACUUM cannot run inside a transaction block; Django's connection is in autocommit here.
    _execute(f"VACUUM (ANALYZE) {Memory._meta.db_table}")


def copy_memories(
    *,
    tenant: Tenant,
    corpus: Corpus,
    rows: GeneratedRows,
    progress: ProgressFactory = _silent_progress,
    embedding_model: str | None = None,
    workers: int = 1,
) -> int:
    """Stream the rows into memory_memory with binary COPY. Returns rows written.

    Every row is a live, embedded, global (no project) explicit memory of the tenant, with a
    unique text and its real content hash; created_at runs one second apart in load order.
    Its vector is stamped as made by ``embedding_model`` (default: the tenant's current model,
    so recall compares queries with it).

    ``workers`` > 1 splits the subjects among that many connections, each one COPY in its own
    transaction (as a parallel restore does): the server derives each share's postings and
    counts on its own core. The tenant must be committed first, and a failed share leaves the
    others' rows (the benchmark's cleanup deletes the tenant).
    """
    model = (
        tenant_embedding_fingerprint(tenant=tenant) if embedding_model is None else embedding_model
    )
    total = len(rows.labels)
    start_at: datetime = timezone.now() - timedelta(seconds=total)
    bar = progress("copy rows", total)
    lock = threading.Lock()

    def advance(count: int) -> None:
        with lock:
            bar.update(count)

    def copy_share(share: np.ndarray) -> int:
        return _copy_share(
            tenant=tenant,
            corpus=corpus,
            rows=rows,
            share=share,
            start_at=start_at,
            model=model,
            advance=advance,
        )

    try:
        if workers <= 1:
            return copy_share(np.arange(total))
        shares = [np.flatnonzero(rows.labels % workers == worker) for worker in range(workers)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return sum(pool.map(_in_own_connection(copy_share), shares))
    finally:
        bar.close()


def _in_own_connection(work: Callable[[np.ndarray], int]) -> Callable[[np.ndarray], int]:
    """``work`` run on a pool thread, whose Django connections are its own: closed after."""

    def run(share: np.ndarray) -> int:
        try:
            with _maintenance_session():
                return work(share)
        finally:
            connections.close_all()

    return run


def _copy_share(
    *,
    tenant: Tenant,
    corpus: Corpus,
    rows: GeneratedRows,
    share: np.ndarray,
    start_at: datetime,
    model: str,
    advance: Callable[[int], None],
) -> int:
    """One COPY of the rows at the indices ``share``, in one transaction on this thread's
    connection."""
    tenant_id = tenant.pk
    subject_ids = corpus.subject_ids
    connection = connections[PRIMARY]
    connection.ensure_connection()
    vector_info = TypeInfo.fetch(connection.connection, "vector")
    with transaction.atomic(using=PRIMARY), connection.cursor() as cursor:
        layout = _copy_layout(cursor)
        constants = [layout.constants[column] for column in layout.columns[len(_PER_ROW_COLUMNS) :]]
        raw_cursor = cursor.cursor
        # Scoped to this cursor: Django's own cursors keep their text vector loaders.
        register_vector_info(raw_cursor, vector_info)
        copy_sql = (
            f"COPY {Memory._meta.db_table} ({', '.join(layout.columns)}) FROM STDIN (FORMAT BINARY)"
        )
        with raw_cursor.copy(copy_sql) as copy:
            copy.set_types(layout.type_oids)
            for written, index in enumerate(share.tolist(), start=1):
                created = start_at + timedelta(seconds=index)
                text = (
                    f"synthetic memory {index} about topic "
                    f"{rows.topics[index]}.{rows.subtopics[index]}"
                )
                copy.write_row(
                    (
                        # In _PER_ROW_COLUMNS order.
                        uuid.uuid4(),
                        created,
                        created,
                        tenant_id,
                        subject_ids[rows.labels[index]],
                        text,
                        rows.vectors[index],
                        embedding_content_hash(text),
                        created,
                        model,
                        created,
                        created,
                        *constants,
                    )
                )
                if written % COPY_CHUNK_ROWS == 0:
                    advance(COPY_CHUNK_ROWS)
    return len(share)


def bulk_load(
    *,
    tenant: Tenant,
    corpus: Corpus,
    progress: ProgressFactory = _silent_progress,
    allow_shared: bool = False,
    embedding_model: str | None = None,
    workers: int = 1,
) -> LoadTimings:
    """The fast path: drop the vector indexes, COPY, build them again, VACUUM ANALYZE.
    ``embedding_model``: the fingerprint the vectors are stamped with (default: the
    tenant's current model). ``workers``: connections the rows are copied over
    (:func:`copy_memories`).

    WARNING: the indexes are dropped for the whole table, so other tenants' recall on the
    database runs without them until the rebuild ends: refused on a database no benchmark
    created unless ``allow_shared``.
    """
    require_disposable_database(allow_shared=allow_shared, step="a bulk load")
    timings = LoadTimings()
    started = time.perf_counter()
    rows = corpus.generate_rows(progress)
    timings.generate_s = time.perf_counter() - started
    with _maintenance_session():
        rebuild = deferred_indexes()
        started = time.perf_counter()
        for index in rebuild:
            drop_index(index)
        timings.index_drop_s = time.perf_counter() - started
        try:
            started = time.perf_counter()
            timings.rows = copy_memories(
                tenant=tenant,
                corpus=corpus,
                rows=rows,
                progress=progress,
                embedding_model=embedding_model,
                workers=workers,
            )
            timings.copy_s = time.perf_counter() - started
        finally:
            # Whatever happened, the table gets its indexes back.
            bar = progress("build deferred indexes", len(rebuild))
            for index in rebuild:
                started = time.perf_counter()
                notices = build_index(index)
                elapsed = time.perf_counter() - started
                if index is HNSW_INDEX:
                    timings.index_build_s, timings.index_notices = elapsed, notices
                else:
                    timings.other_index_builds_s[index.name] = elapsed
                bar.update(1)
            bar.close()
        del rows
        timings.index_rows = live_embedded_rows()
        started = time.perf_counter()
        vacuum_analyze()
        timings.vacuum_analyze_s = time.perf_counter() - started
    return timings


def live_embedded_rows() -> int:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_memory "
            "WHERE superseded_by_id IS NULL AND embedding IS NOT NULL"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


@dataclass
class CleanupReport:
    rows_deleted: int
    method: str
    seconds: float


def delete_corpus(*, tenant: Tenant, allow_shared: bool = False) -> CleanupReport:
    """Remove a bench tenant's rows (fast path) and then the tenant. Other tenants' rows stay.

    Only this tenant's rows in the table → TRUNCATE. Otherwise DELETE + VACUUM with the
    vector indexes dropped and rebuilt around them (repairing an HNSW graph after a mass
    deletion is slower than building it again). Both change shared tables, so both are refused
    on a database no benchmark created unless ``allow_shared``.
    """
    require_disposable_database(allow_shared=allow_shared, step="the corpus cleanup")
    started = time.perf_counter()
    table = Memory._meta.db_table
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FILTER (WHERE tenant_id = %s), count(*) FROM {table}",  # noqa: S608
            [tenant.pk],
        )
        row = cursor.fetchone()
    mine, total = (int(row[0]), int(row[1])) if row else (0, 0)
    method = "delete+vacuum"
    with _maintenance_session():
        if mine and mine == total and _try_truncate(table):
            method = "truncate"
        elif mine:
            # Other tenants' rows stay, so DELETE + VACUUM. VACUUM has to repair the HNSW
            # graph around every deleted row: measured at 1M rows, 100k deletions took over
            # ten minutes, a fresh build of the survivors five. So the graph is rebuilt.
            rebuild = [
                HNSW_INDEX,
                *([SCOPE_VECTORS_INDEX] if index_exists(SCOPE_VECTORS_INDEX) else []),
            ]
            method = "drop vector indexes+delete+vacuum+rebuild"
            for index in rebuild:
                drop_index(index)
            try:
                _execute(f"DELETE FROM {table} WHERE tenant_id = %s", [tenant.pk])  # noqa: S608
                vacuum_analyze()
            finally:
                for index in rebuild:
                    build_index(index)
        if not vector_index_exists():  # e.g. an earlier run died mid-build
            build_index(HNSW_INDEX)
    # The tenant row itself. There is no tenant_delete service, and a bench tenant owns
    # nothing else, so one plain DELETE: the database's own foreign keys refuse it should
    # any other row still point at the tenant (no ORM collector walking every app's tables).
    _execute(f"DELETE FROM {Tenant._meta.db_table} WHERE id = %s", [tenant.pk])  # noqa: S608
    return CleanupReport(rows_deleted=mine, method=method, seconds=time.perf_counter() - started)


def _try_truncate(table: str) -> bool:
    """TRUNCATE without CASCADE: refused (and skipped) if another table references this one."""
    try:
        with transaction.atomic(using=PRIMARY):
            _execute(f"TRUNCATE {table}")
    except Exception:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Ground truth and recall measurement.


@dataclass(frozen=True)
class Neighbour:
    memory_id: uuid.UUID
    distance: float


def exact_top_k(*, tenant_id: Any, subject_id: str, vector: np.ndarray, k: int) -> list[Neighbour]:
    """The subject's true top-k live global rows, by a plain exact scan in SQL.

    ``+ 0`` keeps HNSW out of it: the index can only serve ORDER BY on the bare operator.
    Independent of the recall code on purpose: this is what recall is checked against.
    """
    literal = vector_literal(vector.tolist())
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT id, embedding <=> %s::vector AS distance FROM memory_memory "
            "WHERE tenant_id = %s AND subject_id = %s "
            "AND superseded_by_id IS NULL AND embedding IS NOT NULL AND project_id IS NULL "
            "ORDER BY (embedding <=> %s::vector) + 0, id LIMIT %s",
            [literal, tenant_id, subject_id, literal, k],
        )
        return [Neighbour(memory_id=row[0], distance=float(row[1])) for row in cursor.fetchall()]


def recall_at_k(returned: Sequence[float], truth: Sequence[float], *, k: int) -> float:
    """Share of the true top-k that was returned, counting ties at the k-th distance as hits.

    Distances, not ids: two rows at the same distance are equally right answers.
    """
    if not truth:
        return 1.0
    cutoff = truth[min(k, len(truth)) - 1] + 1e-6
    hits = sum(1 for distance in returned[:k] if distance <= cutoff)
    return min(hits, len(truth[:k])) / len(truth[:k])


@dataclass
class QueryStats:
    latencies_ms: list[float] = field(default_factory=list)
    recalls: list[float] = field(default_factory=list)
    underfilled: int = 0
    eligible_for_underfill: int = 0

    def add(
        self, *, latency_ms: float, recall: float, underfilled: bool, subject_rows: int, k: int
    ) -> None:
        self.latencies_ms.append(latency_ms)
        self.recalls.append(recall)
        if subject_rows >= k:
            self.eligible_for_underfill += 1
            self.underfilled += int(underfilled)

    def summary(self) -> dict[str, Any]:
        if not self.latencies_ms:
            return {"queries": 0}
        latencies = np.asarray(self.latencies_ms)
        return {
            "queries": len(self.latencies_ms),
            "p50_ms": round(float(np.percentile(latencies, 50)), 3),
            "p90_ms": round(float(np.percentile(latencies, 90)), 3),
            "p99_ms": round(float(np.percentile(latencies, 99)), 3),
            "mean_ms": round(float(latencies.mean()), 3),
            "recall_at_10": round(float(np.mean(self.recalls)), 4),
            "min_recall_at_10": round(float(np.min(self.recalls)), 4),
            "underfill_rate": (
                round(self.underfilled / self.eligible_for_underfill, 4)
                if self.eligible_for_underfill
                else 0.0
            ),
        }


@dataclass
class RecallRun:
    overall: QueryStats = field(default_factory=QueryStats)
    per_strategy: dict[str, QueryStats] = field(default_factory=dict)

    def add(self, strategy: str, **values: Any) -> None:
        self.overall.add(**values)
        self.per_strategy.setdefault(strategy, QueryStats()).add(**values)

    def summary(self) -> dict[str, Any]:
        return {
            **self.overall.summary(),
            "per_strategy": {name: stats.summary() for name, stats in self.per_strategy.items()},
        }


@contextmanager
def production_recall_settings() -> Iterator[None]:
    """Measure recall as production runs it, and only recall.

    ``DEBUG`` off: with it on (local settings) Django logs every statement, formatting the
    5 KB vector literal into each one. The recall bump gets a score floor no hit reaches: it
    runs on a background thread whose UPDATEs would compete with the measured calls.
    """
    with override_settings(DEBUG=False, MEMORY_RECALL_BUMP_MIN_SCORE=math.inf):
        yield


def measure_recall(
    *,
    tenant: Tenant,
    corpus: Corpus,
    subject_indices: np.ndarray,
    seed: int,
    limit: int = 10,
    progress: ProgressFactory = _silent_progress,
    description: str = "recall",
    mode: str = "semantic",
) -> RecallRun:
    """Run one ``memory_recall`` per subject index with a precomputed query vector.

    Latency is the wall time of the service call (ORM, guard, heavy-read slot, every SQL round
    trip); the query embedding is excluded because the vector is passed in. ``semantic`` mode
    by default: the vector ranking the targets are about (``hybrid`` adds the keyword leg,
    which the synthetic query text "bench" never matches).
    """
    from apps.memory.selectors import memory_recall

    vectors = corpus.query_vectors(subject_indices, seed=seed)
    run = RecallRun()
    bar = progress(description, len(subject_indices))
    try:
        with production_recall_settings():
            # One untimed call warms the connection, the plan cache and the code path.
            warm = int(subject_indices[0]) if len(subject_indices) else 0
            memory_recall(
                tenant=tenant,
                subject_id=corpus.subject_ids[warm],
                query="bench",
                limit=limit,
                mode=mode,
                query_embedding=vectors[0].tolist() if len(vectors) else None,
            )
            for subject_index, vector in zip(subject_indices, vectors, strict=True):
                subject_id = corpus.subject_ids[int(subject_index)]
                as_list = vector.tolist()
                started = time.perf_counter()
                result = memory_recall(
                    tenant=tenant,
                    subject_id=subject_id,
                    query="bench",
                    limit=limit,
                    mode=mode,
                    query_embedding=as_list,
                )
                latency_ms = (time.perf_counter() - started) * 1000
                truth = [
                    neighbour.distance
                    for neighbour in exact_top_k(
                        tenant_id=tenant.pk, subject_id=subject_id, vector=vector, k=limit
                    )
                ]
                # `similarity` is the vector leg's cosine (in hybrid mode `score` is the fusion's).
                returned = [
                    1.0 - hit.similarity for hit in result.results if hit.similarity is not None
                ]
                run.add(
                    result.meta["strategy"],
                    latency_ms=latency_ms,
                    recall=recall_at_k(returned, truth, k=limit),
                    underfilled=bool(result.meta["underfilled"]),
                    subject_rows=int(corpus.sizes[int(subject_index)]),
                    k=limit,
                )
                bar.update(1)
    finally:
        bar.close()
    return run


def measure_crossover(
    *,
    tenant: Tenant,
    corpus: Corpus,
    queries: int,
    seed: int,
    progress: ProgressFactory = _silent_progress,
    mode: str = "semantic",
) -> dict[str, dict[str, Any]]:
    """Both strategies on each crossover subject, forced through the threshold setting.

    Exact: threshold above the subject's size. ANN: threshold one below it, so the bounded
    count reads as many index entries as it would at a threshold right at the crossover.
    """
    results: dict[str, dict[str, Any]] = {}
    for size, subject_id in sorted(corpus.crossover_subject_ids.items()):
        indices = np.full(queries, corpus.subject_index(subject_id), dtype=np.int64)
        row: dict[str, Any] = {}
        for strategy, threshold in (("exact", size + 1), ("ann", size - 1)):
            with override_settings(MEMORY_EXACT_SCAN_MAX_ROWS=threshold):
                run = measure_recall(
                    tenant=tenant,
                    corpus=corpus,
                    subject_indices=indices,
                    seed=seed,
                    progress=progress,
                    description=f"crossover {size} rows, {strategy}",
                    mode=mode,
                )
            row[strategy] = run.summary()
        results[str(size)] = row
    return results


# ---------------------------------------------------------------------------------------------
# Embedding throughput with the real local provider.

_SUBJECTS = (
    "the deploy pipeline",
    "our staging database",
    "the user",
    "the billing service",
    "the editor",
    "the nightly backup",
    "the API gateway",
    "the design review",
    "the on-call rotation",
    "the search index",
    "the mobile app",
    "the test suite",
)
_VERBS = (
    "prefers",
    "runs on",
    "depends on",
    "was migrated to",
    "breaks when it meets",
    "should never touch",
    "is scheduled around",
    "reports errors to",
    "is owned by",
    "was rewritten in",
)
_OBJECTS = (
    "Friday afternoons",
    "Postgres 18",
    "dark mode",
    "a blue-green rollout",
    "the eu-west region",
    "a two-hour window",
    "Rust",
    "the platform team",
    "an S3 bucket with versioning",
    "strict type checks",
    "weekly release trains",
    "a rate limit of 600 writes a minute",
)
_TAILS = (
    "",
    " since the incident in March",
    " unless someone says otherwise",
    " according to the last retro",
    " and nobody wants to change that",
    " because the old setup kept timing out",
)


def synthetic_sentences(count: int, *, seed: int = 0) -> list[str]:
    """Plausible one-line memories (the lengths and vocabulary agents actually write)."""
    rng = np.random.default_rng([seed, 5])
    return [
        _topic(
            _SUBJECTS[rng.integers(len(_SUBJECTS))],
            _VERBS[rng.integers(len(_VERBS))],
            _OBJECTS[rng.integers(len(_OBJECTS))],
            _TAILS[rng.integers(len(_TAILS))],
        )
        + f" (note {index})."
        for index in range(count)
    ]


def _topic(subject: str, verb: str, obj: str, tail: str) -> str:
    return f"{subject.capitalize()} {verb} {obj}{tail}"


def distinct_topics(*, seed: int) -> list[str]:
    """Every sentence :func:`synthetic_sentences` can write, without its note number, once
    each, in an order drawn from ``seed``: natural texts of a memory's length that no one
    asked before, for load that must not repeat a query."""
    sentences = [
        _topic(subject, verb, obj, tail)
        for subject in _SUBJECTS
        for verb in _VERBS
        for obj in _OBJECTS
        for tail in _TAILS
    ]
    order = np.random.default_rng([seed, 11]).permutation(len(sentences))
    return [sentences[index] for index in order]


@dataclass
class EmbeddingThroughput:
    texts: int
    batch_size: int
    warmup_s: float
    seconds: float

    @property
    def texts_per_s(self) -> float:
        return self.texts / self.seconds if self.seconds else 0.0


def measure_embedding_throughput(
    *, count: int, progress: ProgressFactory = _silent_progress
) -> EmbeddingThroughput:
    """Texts/s of the local provider in the embedding task's batch size (model load excluded)."""
    from apps.providers.embeddings import EmbeddingConfig, embed_texts

    config = EmbeddingConfig(provider="local")
    texts = synthetic_sentences(count)
    batch_size = settings.EMBEDDING_BATCH_SIZE
    started = time.perf_counter()
    embed_texts(config, ["warm-up: loads the model once"])
    warmup_s = time.perf_counter() - started
    bar = progress("embed texts (local)", len(texts))
    started = time.perf_counter()
    try:
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            embed_texts(config, batch)
            bar.update(len(batch))
    finally:
        bar.close()
    return EmbeddingThroughput(
        texts=len(texts),
        batch_size=batch_size,
        warmup_s=warmup_s,
        seconds=time.perf_counter() - started,
    )


def server_versions() -> dict[str, str]:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('server_version'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        row = cursor.fetchone()
    return {"postgres": str(row[0]), "pgvector": str(row[1])} if row else {}
