import uuid

import pytest
from django.db import connections

from apps.core.db.routers import HEAVY_READ
from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import heavy_read_slot
from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_supersede
from tests.memory.factories import memory_row
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory


def _texts(result):
    return [hit.memory.text for hit in result.results]


def _break_embeddings(tenant):
    """Point the tenant at an endpoint that refuses connections: a real provider outage."""
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


def test_recall_ranks_the_subjects_memories_by_meaning(tenant):
    memory_row(tenant, "a", "the deploy pipeline runs on friday afternoons")
    memory_row(tenant, "a", "dark mode is preferred in the editor")
    memory_row(tenant, "a", "lunch is at noon")

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=2)

    assert _texts(result)[0] == "dark mode is preferred in the editor"
    assert (result.results[0].score or 0) > (result.results[1].score or 0)
    assert result.meta["strategy"] == "exact"
    assert result.meta["ann_iterative_scan"] == "off"
    assert result.meta["fallback"] is False
    assert result.meta["reason"] is None
    assert result.meta["total_count"] == 2
    assert result.meta["underfilled"] is False


def test_recall_never_crosses_subject_or_tenant(tenant, other_tenant):
    memory_row(tenant, "a", "my editor uses dark mode")
    memory_row(tenant, "b", "their editor uses dark mode too")
    memory_row(other_tenant, "a", "a foreign editor in dark mode")

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=10)

    assert _texts(result) == ["my editor uses dark mode"]
    assert result.meta["underfilled"] is True


def test_fallback_path_is_scoped_too(tenant, other_tenant):
    memory_row(tenant, "a", "my editor uses dark mode")
    memory_row(tenant, "b", "their editor uses dark mode too")
    memory_row(other_tenant, "a", "a foreign editor in dark mode")
    _break_embeddings(tenant)

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=10)

    assert _texts(result) == ["my editor uses dark mode"]
    assert result.results[0].score is None
    assert result.meta["fallback"] is True
    assert result.meta["reason"] == "provider_error"
    assert "ann_iterative_scan" not in result.meta


def test_fallback_ranks_more_matched_terms_first_then_recent(tenant):
    memory_row(tenant, "a", "dark mode everywhere", embedded=False)
    memory_row(tenant, "a", "the editor theme", embedded=False)
    memory_row(tenant, "a", "editor in dark mode", embedded=False)
    memory_row(tenant, "a", "nothing relevant", embedded=False)
    _break_embeddings(tenant)

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=10)

    assert _texts(result) == ["editor in dark mode", "dark mode everywhere", "the editor theme"]


def test_empty_scope_on_the_healthy_path_is_distinguishable_from_fallback(tenant):
    healthy = memory_recall(tenant=tenant, subject_id="nobody", query="anything", limit=5)
    _break_embeddings(tenant)
    degraded = memory_recall(tenant=tenant, subject_id="nobody", query="anything", limit=5)

    assert healthy.results == []
    assert (healthy.meta["fallback"], healthy.meta["reason"]) == (False, None)
    assert degraded.results == []
    assert (degraded.meta["fallback"], degraded.meta["reason"]) == (True, "provider_error")


def test_shed_heavy_read_degrades_to_the_fallback(tenant, settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1
    memory_row(tenant, "a", "editor dark mode")

    with heavy_read_slot(tenant_id=tenant.pk):
        result = memory_recall(tenant=tenant, subject_id="a", query="editor", limit=5)

    assert result.meta["fallback"] is True
    assert result.meta["reason"] == "heavy_read_shed"
    assert _texts(result) == ["editor dark mode"]


def test_pending_rows_are_recalled_by_their_words_only(tenant):
    memory_row(tenant, "a", "editor dark mode", embedded=False)

    semantic = memory_recall(
        tenant=tenant, subject_id="a", query="editor dark mode", limit=5, mode="semantic"
    )
    hybrid = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=5)

    assert semantic.results == []
    assert semantic.meta["underfilled"] is True
    assert [hit.selection_reason for hit in hybrid.results] == ["keyword_pending"]


def test_superseded_rows_drop_out_unless_asked_for(tenant):
    old = remember(tenant, "a", "deploys happen on friday")
    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("deploys never friday")
    )
    from apps.memory.services import memory_embed_pending

    memory_embed_pending(memory_ids=[str(new.pk)])

    default = memory_recall(tenant=tenant, subject_id="a", query="friday deploys", limit=5)
    audit = memory_recall(
        tenant=tenant, subject_id="a", query="friday deploys", limit=5, include_superseded=True
    )

    assert _texts(default) == ["deploys never friday"]
    assert sorted(_texts(audit)) == ["deploys happen on friday", "deploys never friday"]
    assert "ann_iterative_scan" not in audit.meta


def test_project_partition_is_global_union_active_project(tenant):
    alpha, beta = ProjectFactory.create(tenant=tenant), ProjectFactory.create(tenant=tenant)
    memory_row(tenant, "a", "global note about builds")
    memory_row(tenant, "a", "alpha note about builds", project_id=alpha.pk)
    memory_row(tenant, "a", "beta note about builds", project_id=beta.pk)

    def recall(project_id):
        result = memory_recall(
            tenant=tenant, subject_id="a", query="builds note", project_id=project_id, limit=10
        )
        return sorted(_texts(result))

    assert recall(None) == ["global note about builds"]
    assert recall(alpha.pk) == ["alpha note about builds", "global note about builds"]
    # Recall does not validate a well-formed id: an unknown project is an empty partition.
    assert recall(uuid.uuid4()) == ["global note about builds"]


def test_large_subject_uses_the_iterative_hnsw_scan_and_matches_exact(tenant, settings):
    for i in range(40):
        memory_row(tenant, "big", f"note {i} about topic {i % 7} and item {i}")
    memory_row(tenant, "small", "note about topic 3")
    exact = memory_recall(tenant=tenant, subject_id="big", query="topic 3 item", limit=5)
    settings.MEMORY_EXACT_SCAN_MAX_ROWS = 10

    ann = memory_recall(tenant=tenant, subject_id="big", query="topic 3 item", limit=5)

    assert exact.meta["strategy"] == "exact"
    assert ann.meta["strategy"] in {"ann", "ann+exact"}
    assert ann.meta["ann_iterative_scan"] == "applied"
    # Ties at the k-th score may be broken differently by the index; the scores may not differ.
    assert [round(h.score or 0, 6) for h in ann.results] == [
        round(h.score or 0, 6) for h in exact.results
    ]
    assert ann.results[0].memory.pk == exact.results[0].memory.pk


@pytest.mark.parametrize(
    ("_case", "query", "code"),
    [
        ("blank", "   ", "invalid_query"),
        ("not_a_string", 42, "invalid_query"),
        ("too_long", "x" * 501, "query_too_long"),
    ],
)
def test_query_is_validated_before_embedding(tenant, mocker, _case, query, code):
    embed = mocker.patch("apps.memory.selectors.recall.embed_query_soon")

    with pytest.raises(ValidationFailed) as excinfo:
        memory_recall(tenant=tenant, subject_id="a", query=query)

    assert excinfo.value.code == code
    embed.assert_not_called()


def test_a_failing_heavy_read_repo_degrades_to_the_scoped_fallback(tenant, other_tenant, mocker):
    from django.db import OperationalError

    memory_row(tenant, "a", "editor dark mode")
    memory_row(other_tenant, "a", "foreign editor dark mode")
    mocker.patch(
        "apps.memory.selectors.recall.semantic_recall",
        side_effect=OperationalError("canceling statement due to statement timeout"),
    )
    mocker.patch(
        "apps.memory.selectors.recall.hybrid_recall",
        side_effect=OperationalError("canceling statement due to statement timeout"),
    )

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=5)

    assert result.meta["fallback"] is True
    assert result.meta["reason"] == "heavy_read_unavailable"
    assert _texts(result) == ["editor dark mode"]


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
@pytest.mark.parametrize("exact_scan_max_rows", [10_000, 5], ids=["exact", "ann"])
def test_prepared_recall_statements_answer_exactly_as_unprepared_ones(
    tenant, settings, mode, exact_scan_max_rows
):
    """The heavy-read repo prepares recall's statements after a run or two (psycopg's
    prepare_threshold); each strategy must return the same rows once they are prepared,
    with custom and with generic plans."""
    for i in range(12):
        memory_row(tenant, "a", f"note {i} about deploy topic {i % 4}")
    memory_row(tenant, "b", "another subject's deploy topic note")
    settings.MEMORY_EXACT_SCAN_MAX_ROWS = exact_scan_max_rows
    heavy_read = connections[HEAVY_READ]
    heavy_read.ensure_connection()
    raw = heavy_read.connection

    def answers():
        return [
            [
                (hit.memory.pk, round(hit.score or 0, 6))
                for hit in memory_recall(
                    tenant=tenant, subject_id=subject, query="deploy topic 2", mode=mode, limit=4
                ).results
            ]
            for subject in ("a", "b", "a", "b")
        ]

    unprepared = answers()
    before = raw.prepare_threshold
    raw.prepare_threshold = 0
    try:
        prepared = answers()
        # Postgres plans a prepared statement's first five runs with its values, then may
        # switch to a generic plan: force that plan too.
        with heavy_read.cursor() as cursor:
            cursor.execute("SET plan_cache_mode = force_generic_plan")
        generic = answers()
        with heavy_read.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")
        with heavy_read.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                ["%memory_memory%"],
            )
            statements = cursor.fetchone()[0]
    finally:
        raw.prepare_threshold = before

    assert prepared == unprepared
    assert generic == unprepared
    assert all(unprepared)
    assert statements > 0
