"""The keyword leg's BM25, read from the postings, against the definition it must reproduce:
BM25 computed from the documents themselves, weighing words against the subject's whole store
(live or superseded, any project, embedded or not) and ranking the rows in the recall's scope."""

import random

import pytest
from django.db import connections

from apps.core.db.filters import record_filter_parse
from apps.memory.models import MEMORY_TEXT_SEARCH_CONFIG, Memory
from apps.memory.selectors import Keywords, keyword_ranking, memory_recall, recall_scope
from tests.memory.factories import MemoryFactory, memory_row
from tests.projects.factories import ProjectFactory

VOCABULARY = [
    "deploy",
    "pipeline",
    "friday",
    "kayak",
    "river",
    "garden",
    "tea",
    "hiking",
    "museum",
    "guitar",
    "painting",
    "concert",
    "library",
    "bakery",
    "festival",
    "violin",
    "lantern",
    "harbor",
    "meadow",
    "orchard",
]

# BM25 as first written: every matching row's lexemes unnested and counted (text occurrences
# count 1, context occurrences the context weight), IDF over the subject's every row, lengths
# normalised over the subject's rows that match; the rows of the scope ranked; scores rounded
# to 12 decimals so that equal scores tie exactly and go by id.
ONE_PASS_BM25 = """
    WITH terms AS (
        SELECT DISTINCT lexeme FROM unnest(to_tsvector(%(config)s::regconfig, %(query)s))
    ), collection AS (
        SELECT id, search_vector AS document FROM memory_memory
         WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
    ), scope AS (
        SELECT id FROM memory_memory
         WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
           AND superseded_by_id IS NULL AND project_id IS NULL
           AND (embedding IS NOT NULL OR %(pending)s)
    ), matched AS (
        SELECT * FROM collection WHERE document @@ (
            SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM terms)
    ), hits AS (
        SELECT matched.id, term.lexeme, length(matched.document)::float8 AS length,
               (SELECT sum(CASE weight WHEN 'A' THEN 1.0 ELSE %(context_weight)s END)
                  FROM unnest(term.weights) AS weight)::float8 AS frequency
          FROM matched CROSS JOIN LATERAL unnest(matched.document) AS term
         WHERE term.lexeme IN (SELECT lexeme FROM terms)
    ), frequency AS (
        SELECT lexeme, count(*)::float8 AS rows FROM hits GROUP BY lexeme
    )
    SELECT hits.id, round(sum(
               ln(1 + ((SELECT count(*) FROM collection) - frequency.rows + 0.5)
                      / (frequency.rows + 0.5))
               * hits.frequency * (%(k1)s + 1)
               / (hits.frequency + %(k1)s * (1 - %(b)s + %(b)s * hits.length
                  / greatest((SELECT avg(length(document)) FROM matched), 1)))
           )::numeric, 12)::float8 AS score
      FROM hits JOIN frequency USING (lexeme)
     WHERE hits.id IN (SELECT id FROM scope)
     GROUP BY hits.id ORDER BY score DESC, hits.id LIMIT %(limit)s
"""


def _one_pass(tenant, subject_id, query, limit, settings, *, pending=False):
    with connections["default"].cursor() as cursor:
        cursor.execute(
            ONE_PASS_BM25,
            {
                "config": MEMORY_TEXT_SEARCH_CONFIG,
                "query": query,
                "tenant": tenant.pk,
                "subject": subject_id,
                "context_weight": settings.MEMORY_RECALL_CONTEXT_TERM_WEIGHT,
                "k1": settings.MEMORY_RECALL_BM25_K1,
                "b": settings.MEMORY_RECALL_BM25_B,
                "limit": limit,
                "pending": pending,
            },
        )
        return [(memory_id, round(score, 9)) for memory_id, score in cursor.fetchall()]


def _from_postings(tenant, subject_id, query, limit, *, narrowed=False):
    scope = recall_scope(
        tenant_id=tenant.pk, subject_id=subject_id, project_id=None, include_superseded=False
    )
    keywords = Keywords(query=query, tenant_id=tenant.pk, subject_id=subject_id, narrowed=narrowed)
    return [
        (memory.pk, round(score, 9)) for memory, score in keyword_ranking(scope, keywords, limit)
    ]


def _soup(tenant, rng, count, **fields):
    # Rows to rank, not writes to test: built by the factory, inserted in one statement.
    return Memory.objects.bulk_create(
        MemoryFactory.build(
            tenant=tenant,
            subject_id="a",
            text=" ".join(rng.choices(VOCABULARY, k=rng.randint(3, 9))),
            context=" ".join(rng.choices(VOCABULARY, k=rng.randint(0, 14))),
            **fields,
        )
        for _ in range(count)
    )


@pytest.fixture
def word_soup(tenant):
    """400 memories over a small vocabulary: words repeat within and across memories, in the
    text and in the context, so presence and occurrence counts disagree often. Beside them, in
    the same subject but outside the ranked scope, rows the collection still counts: pending
    ones, superseded ones and another project's."""
    rng = random.Random(20261129)
    live = _soup(tenant, rng, 400, embedded=True)
    _soup(tenant, rng, 30)
    _soup(tenant, rng, 40, embedded=True, superseded_by=live[0])
    _soup(tenant, rng, 30, embedded=True, project=ProjectFactory.create(tenant=tenant))
    memory_row(tenant, "b", "deploy pipeline kayak river in another subject")
    return tenant


QUERIES = [
    "When is the deploy pipeline on friday?",
    "kayak on the river",
    "tea garden museum guitar",
    "violin concert at the harbor festival",
    "lantern",
]


# Both ways the statement meets the scope: rows probed best first, or the scope's ids read
# first (what a filtered, windowed or as_of recall runs).
@pytest.mark.parametrize("narrowed", [False, True])
@pytest.mark.parametrize("query", QUERIES)
def test_the_postings_ranking_is_the_documents_ranking(word_soup, settings, query, narrowed):
    ranked = _from_postings(word_soup, "a", query, 40, narrowed=narrowed)

    assert ranked == _one_pass(word_soup, "a", query, 40, settings)
    assert len(ranked) == 40


@pytest.mark.parametrize("query", QUERIES)
def test_recall_returns_the_documents_top_ten(word_soup, settings, query):
    # Recall's keyword mode ranks pending rows too.
    expected = _one_pass(word_soup, "a", query, 10, settings, pending=True)

    result = memory_recall(tenant=word_soup, subject_id="a", query=query, mode="keyword")

    assert [(hit.memory.pk, round(hit.score or 0, 6)) for hit in result.results] == [
        (memory_id, round(score, 6)) for memory_id, score in expected
    ]
    assert len(expected) == 10


def test_occurrences_count_not_only_presence(tenant):
    # Same distinct lexemes (same length); one says "kayak" three times.
    memory_row(tenant, "a", "kayak kayak kayak weekend")
    memory_row(tenant, "a", "kayak weekend")

    result = memory_recall(tenant=tenant, subject_id="a", query="kayak", mode="keyword")

    assert [hit.memory.text for hit in result.results] == [
        "kayak kayak kayak weekend",
        "kayak weekend",
    ]
    assert (result.results[0].score or 0) > (result.results[1].score or 0)


def test_other_subjects_rows_neither_rank_nor_count(word_soup, settings):
    ranked = _from_postings(word_soup, "a", "deploy pipeline kayak river", 40)

    assert ranked == _one_pass(word_soup, "a", "deploy pipeline kayak river", 40, settings)
    assert Memory.objects.filter(pk__in=[pk for pk, _ in ranked], subject_id="b").count() == 0


def test_a_filter_decides_which_rows_rank_never_their_scores(tenant):
    for index in range(12):
        memory_row(tenant, "a", f"kayak trip number {index} on the river", tags=["trips"])
    for index in range(30):
        memory_row(tenant, "a", f"kayak lesson number {index} at the lake")
    unfiltered = {
        hit.memory.pk: hit.score
        for hit in memory_recall(
            tenant=tenant, subject_id="a", query="kayak river", mode="keyword", limit=50
        ).results
    }

    filtered = memory_recall(
        tenant=tenant,
        subject_id="a",
        query="kayak river",
        mode="keyword",
        limit=50,
        narrowing=record_filter_parse({"tags": "trips"}),
    ).results

    assert len(filtered) == 12
    assert all("river" in hit.memory.text for hit in filtered)
    assert [hit.score for hit in filtered] == [unfiltered[hit.memory.pk] for hit in filtered]


@pytest.mark.django_db
def test_the_user_in_a_question_is_no_keyword(tenant):
    # Every memory is about the subject, whether it says "the user" or "I": as a keyword,
    # "user" would rank a third-person memory above the one that answers.
    memory_row(tenant, "a", "The user enjoys hiking on weekends.")
    answer = memory_row(tenant, "a", "I work at Deloitte as an auditor.")

    found = memory_recall(
        tenant=tenant, subject_id="a", query="Where does the user work?", mode="keyword"
    )

    assert [hit.memory.pk for hit in found.results] == [answer.pk]


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("Where does the user work?", "Where does   work?"),
        ("What is the user's favorite band?", "What is   favorite band?"),
        ("How does the user interface look?", "How does the user interface look?"),
    ],
)
def test_only_the_user_as_the_subject_leaves_the_keywords(tenant, question, kept):
    keywords = Keywords.of_recall(
        query=question, tenant=tenant, subject_id="a", narrowing=None, as_of=None
    )

    assert keywords.query == kept
