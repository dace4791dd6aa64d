"""A binary COPY of memory rows leaves the store exactly as writing them one by one does: the
same keyword postings, subject counts and recall answers, the rows' search documents and
defaults included; and a copy the database refuses leaves nothing behind."""

import math
import random
import uuid

import pytest
from django.db import IntegrityError, connection

from apps.core.db.copies import copy_instances
from apps.core.db.inserts import insert_instances
from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import write_transaction
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from tests.memory.factories import MemoryFactory
from tests.providers.vectors import fake_provider_vector
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

ROWS = 2400
SUBJECTS = 12
WORDS = [
    "kayak",
    "river",
    "delta",
    "tea",
    "deploy",
    "pipeline",
    "billing",
    "staging",
    "backup",
    "gateway",
    "rotation",
    "editor",
    "mobile",
    "search",
    "index",
    "postgres",
    "rust",
    "window",
    "incident",
    "retro",
    "friday",
    "region",
    "bucket",
]

# Each lexeme's postings with the memory named by its text, so two tenants compare.
POSTINGS = """
    SELECT term.subject_id, memory.text, term.lexeme, term.in_text, term.in_context, term.length
      FROM memory_search_term AS term JOIN memory_memory AS memory ON memory.id = term.memory_id
     WHERE term.tenant_id = %s
"""
USAGE = "SELECT subject_id, live, superseded FROM memory_scope_usage WHERE tenant_id = %s"
DOCUMENTS = """
    SELECT subject_id, text, search_vector::text, valid_from
      FROM memory_memory WHERE tenant_id = %s
"""


def _rows(sql, tenant):
    with connection.cursor() as cursor:
        cursor.execute(sql, [tenant.pk])
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _corpus(tenant, seed):
    """Rows over several subjects, with contexts, derived contexts, pending and embedded rows
    and a superseded row per subject whose successor comes later in the list."""
    rng = random.Random(seed)
    memories = []
    for index in range(ROWS):
        subject = f"subject-{index % SUBJECTS}"
        text = " ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + f" note {index}"
        memories.append(
            MemoryFactory.build(
                tenant=tenant,
                subject_id=subject,
                text=text,
                context=" ".join(rng.choices(WORDS, k=rng.randint(0, 6))),
                derived_context=" ".join(rng.choices(WORDS, k=rng.randint(0, 4))),
                embedding=fake_provider_vector(text) if index % 5 else None,
            )
        )
    for subject_index in range(SUBJECTS):
        superseded, successor = memories[subject_index], memories[subject_index + SUBJECTS]
        superseded.superseded_by_id = successor.pk
    return memories


def _clone(memories, tenant):
    """The same rows for another tenant: new ids in the same order as the originals', the
    version links following them. Recall breaks every tie by id, at the final cut and at each
    leg's candidate cut (rows of equal distance or BM25 score are common in this corpus), so
    only ids ordered alike let the two tenants' answers be compared hit by hit."""
    originals = sorted(memory.pk for memory in memories)
    ids = dict(zip(originals, sorted(uuid.uuid4() for _ in originals), strict=True))
    clones = []
    for memory in memories:
        clone = MemoryFactory.build(
            id=ids[memory.pk],
            tenant=tenant,
            subject_id=memory.subject_id,
            text=memory.text,
            context=memory.context,
            derived_context=memory.derived_context,
            embedding=memory.embedding,
            occurred_at=memory.occurred_at,
        )
        clone.superseded_by_id = ids.get(memory.superseded_by_id)
        clones.append(clone)
    return clones


def _recalls(tenant):
    answers = []
    for subject_index in range(SUBJECTS):
        for query in ("kayak on the river", "deploy pipeline incident", "tea window"):
            for mode in ("keyword", "semantic", "hybrid"):
                result = memory_recall(
                    tenant=tenant,
                    subject_id=f"subject-{subject_index}",
                    query=query,
                    mode=mode,
                    limit=10,
                    query_embedding=fake_provider_vector(query),
                )
                answers.append(_ranking(result.results))
    return answers


def _ranking(hits):
    """Each hit in order: its score (rounded, as float sums may differ in their last bits),
    text, why it was selected, whether it is embedded and still holds."""
    return [
        (
            round(hit.score, 9),
            hit.memory.text,
            hit.selection_reason,
            hit.embedding_status,
            hit.validity,
        )
        for hit in hits
    ]


def test_a_copied_store_equals_one_written_row_by_row(settings):
    # No recall bump: its background UPDATEs would move later answers of one tenant only.
    settings.MEMORY_RECALL_BUMP_MIN_SCORE = math.inf
    one_by_one, copied = TenantFactory.create(), TenantFactory.create()
    memories = _corpus(one_by_one, seed=7)
    clones = _clone(memories, copied)

    # Row by row, each its own statement: successors before the rows they replace.
    with write_transaction():
        for memory in sorted(memories, key=lambda m: m.superseded_by_id is not None):
            insert_instances([memory], using=PRIMARY)
    with write_transaction():
        written = copy_instances(clones, model=Memory, using=PRIMARY)
    # Statistics of the rows just loaded (this transaction's own rows count): without them
    # the planner works from what a background vacuum of earlier tests' rolled-back rows left,
    # and a comparison query has been seen computing until the statement timeout.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory, memory_search_term, memory_scope_usage")

    assert written == ROWS
    assert Memory.objects.filter(tenant=copied).count() == ROWS
    assert _rows(DOCUMENTS, copied) == _rows(DOCUMENTS, one_by_one)
    postings = _rows(POSTINGS, one_by_one)
    assert len(postings) > ROWS * 3
    assert _rows(POSTINGS, copied) == postings
    usage = _rows(USAGE, one_by_one)
    assert len(usage) == SUBJECTS
    assert ("subject-0", str(ROWS // SUBJECTS - 1), "1") in usage
    assert _rows(USAGE, copied) == usage
    answers = _recalls(one_by_one)
    assert sum(len(hits) for hits in answers) > SUBJECTS * 3 * 3 * 5
    assert _recalls(copied) == answers


def test_a_copy_the_database_refuses_leaves_nothing():
    tenant = TenantFactory.create()
    memories = _corpus(tenant, seed=3)
    # The last row repeats the first one's id: the primary key refuses it at the end.
    memories[-1].pk = memories[0].pk

    with pytest.raises(IntegrityError), write_transaction():
        copy_instances(memories, model=Memory, using=PRIMARY)

    assert Memory.objects.filter(tenant=tenant).count() == 0
    assert _rows(POSTINGS, tenant) == []
    assert _rows(USAGE, tenant) == []
