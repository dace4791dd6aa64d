"""Erasure with receipts: every scope-owned table (enumerated from information_schema) holds
0 rows of the scope afterwards, neighbours with near-identical data are untouched, a dry run
changes nothing, and the receipt holds counts and no content."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from apps.dataops.models import ErasureReceipt
from apps.dataops.services import erase_subject, erase_tenant, subject_digest
from apps.extraction.promotion.types import Candidate
from apps.knowledge.models import Article
from apps.knowledge.services import article_link_create, record_surfaced
from apps.knowledge.viewer import Viewer
from apps.memory.models import (
    GraduationDeferral,
    Memory,
    MemoryTombstone,
    PromotionJob,
    SessionPromotion,
)
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_forget,
    memory_graduate,
    memory_supersede,
    promotion_persist,
    session_append_many,
)
from apps.projects.services import project_create
from apps.tenancy.models import IdempotencyRecord
from tests.knowledge.helpers import CURATOR, publish
from tests.memory.helpers import remember

SECRET = "Maria's insulin dose is 12 units at breakfast."
#: Tables that hold no data of a scope, by decision (docs/operators.md, "Erasure").
NOT_SCOPE_OWNED = {
    "tenancy_apikey",  # access configuration: revoked, not erased
    "tenancy_tenant",  # the tenant itself stays (its receipts name it)
    "memory_erasurereceipt",  # the receipts: counts, no content
}
#: Tables keyed otherwise than by a subject column, and how the test finds a subject's rows.
SUBJECT_BY_OTHER_KEY = {
    "knowledge_article": "owner_agent_id = %(subject)s OR source_memory_id IN "
    "(SELECT id FROM memory_memory WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s)",
    "memory_graduationdeferral": "memory_id IN (SELECT id FROM memory_memory WHERE "
    "tenant_id = %(tenant)s AND subject_id = %(subject)s)",
    # The articles an author wrote, counted by triggers: gone with its articles.
    "knowledge_author_article_usage": "author_subject_id = %(subject)s",
}
TENANT_ONLY = {
    "knowledge_articlelink",
    # The tenant's articles, counted by triggers: gone with the last of them.
    "knowledge_tenant_article_usage",
    "memory_embeddingwake",
    "memory_reembedrun",
    "projects_project",
}


def _tables():
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT table_name, array_agg(column_name::text) FROM information_schema.columns
                WHERE table_schema = 'public' GROUP BY table_name"""
        )
        return {name: set(columns) for name, columns in cursor.fetchall()}


def _scoped_tables():
    return {name: cols for name, cols in _tables().items() if "tenant_id" in cols}


def _count(table, where, params):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table} WHERE {where}", params)  # noqa: S608
        return cursor.fetchone()[0]


def _subject_rows(tenant, subject):
    params = {"tenant": tenant.pk, "subject": subject}
    rows = {}
    for table, columns in _scoped_tables().items():
        if table in NOT_SCOPE_OWNED or table in TENANT_ONLY:
            continue
        if "subject_id" in columns:
            where = "tenant_id = %(tenant)s AND subject_id = %(subject)s"
        else:
            assert table in SUBJECT_BY_OTHER_KEY, f"{table}: decide whether it is subject-owned"
            where = f"tenant_id = %(tenant)s AND ({SUBJECT_BY_OTHER_KEY[table]})"
        rows[table] = _count(table, where, params)
    return rows


def _tenant_rows(tenant):
    return {
        table: _count(table, "tenant_id = %(tenant)s", {"tenant": tenant.pk})
        for table in _scoped_tables()
        if table not in NOT_SCOPE_OWNED
    }


def _all_rows():
    return {table: _count(table, "true", {}) for table in _tables() if not table.startswith("pg_")}


def test_every_tenant_table_is_classified(db):
    # A new table with a tenant column must be handled by the erasure and by this test.
    known = {
        "tenancy_idempotencyrecord",
        "memory_sessionmemory",
        "memory_memory",
        # The keyword leg's postings: derived from memory rows, removed with them by triggers.
        "memory_search_term",
        # Each subject's live count: derived from memory rows, removed with them by triggers.
        "memory_scope_usage",
        # Each subject's stored turns and bytes: derived from the turns, the same way.
        "session_scope_usage",
        "memory_sessionpromotion",
        "memory_promotionjob",
        "memory_graduationdeferral",
        "memory_memorytombstone",
        "knowledge_article",
        "knowledge_articleaccessevent",
        "knowledge_author_article_usage",
        *TENANT_ONLY,
        *(NOT_SCOPE_OWNED - {"tenancy_tenant", "memory_erasurereceipt"}),
    }
    assert set(_scoped_tables()) == known


def _fill(tenant, subject, *, project):
    """One subject's data in every table: the same text for every neighbour."""
    session_append_many(
        tenant=tenant,
        subject_id=subject,
        drafts=[
            SessionTurnDraft(session_id="s1", content=SECRET, ttl_seconds=3600),
            SessionTurnDraft(session_id="s1", content="Noted.", role="assistant", ttl_seconds=3600),
        ],
    )
    promoted = promotion_persist(
        tenant=tenant,
        subject_id=subject,
        session_id="s1",
        candidates=[Candidate(text=SECRET, confidence=0.9, source_seqs=(1,))],
        compiler="heuristic",
    )
    old = remember(tenant, subject, "Maria's dose was 10 units.", project_id=project.pk)
    memory_supersede(
        tenant=tenant,
        subject_id=subject,
        memory_id=old.pk,
        draft=MemoryDraft(text="Maria's dose is 11 units.", project_id=project.pk),
    )
    Memory.objects.filter(pk=promoted.memory_ids[0]).update(recall_count=5)
    article = memory_graduate(
        tenant=tenant, subject_id=subject, memory_id=promoted.memory_ids[0]
    ).article
    record_surfaced(
        tenant=tenant,
        viewer=Viewer.for_subject(subject),
        api_key_id=None,
        search_id=uuid.uuid4(),
        article_ids=[article.pk],
    )
    guide = Article.objects.get(tenant=tenant, title="Shared guide")
    article_link_create(
        tenant=tenant,
        viewer=CURATOR,
        from_article_id=guide.pk,
        to_article_id=article.pk,
        kind="relates_to",
    )
    SessionPromotion.objects.create(
        tenant=tenant, subject_id=subject, session_id="s1", content_hash="h"
    )
    GraduationDeferral.objects.create(
        tenant=tenant, memory=old, retry_at=timezone.now(), reason="test"
    )
    forgotten = remember(tenant, subject, "A fact to forget.")
    memory_forget(tenant=tenant, subject_id=subject, memory_id=forgotten.pk)
    PromotionJob.objects.create(tenant=tenant, subject_id=subject, session_id="s1", trigger="sweep")
    IdempotencyRecord.objects.create(
        tenant=tenant,
        subject_id=subject,
        key=f"k-{subject}",
        fingerprint="f",
        claimed_at=timezone.now(),
        response_body={"text": SECRET},
    )


@pytest.fixture
def world(tenant, other_tenant):
    projects = {
        t.pk: project_create(tenant=t, name="Clinic", slug="clinic") for t in (tenant, other_tenant)
    }
    publish(tenant, "Shared guide", "Tenant knowledge stays.")
    publish(other_tenant, "Shared guide", "Tenant knowledge stays.")
    for t, subject in ((tenant, "maria"), (tenant, "maria-2"), (other_tenant, "maria")):
        _fill(t, subject, project=projects[t.pk])
    return tenant


def test_erase_subject_leaves_no_row_of_the_subject_and_touches_no_neighbour(world, other_tenant):
    tenant = world
    before = _subject_rows(tenant, "maria")
    assert all(before.values()), before
    neighbours = (_subject_rows(tenant, "maria-2"), _tenant_rows(other_tenant))
    shared = _count("knowledge_article", "tenant_id = %s AND owner_agent_id = ''", [tenant.pk])

    erasure = erase_subject(tenant=tenant, subject_id="maria", requested_by="test")

    assert set(_subject_rows(tenant, "maria").values()) == {0}
    assert (_subject_rows(tenant, "maria-2"), _tenant_rows(other_tenant)) == neighbours
    assert _count("knowledge_article", "tenant_id = %s AND owner_agent_id = ''", [tenant.pk]) == (
        shared
    )
    receipt = erasure.receipt
    assert receipt["verified"] is True
    assert receipt["scope"] == {
        "type": "subject",
        "tenant_id": str(tenant.pk),
        "subject_sha256": subject_digest("maria"),
    }
    assert receipt["counts"] == {
        "article_access_events": 1,
        "article_links": 1,
        "articles": 1,
        "graduation_deferrals": 1,
        "idempotency_records": 1,
        "memories": 3,
        "promotion_jobs": 1,
        "promotion_watermarks": 1,
        "session_turns": 2,
        "tombstones": 1,
    }
    stored = ErasureReceipt.objects.get(pk=receipt["id"])
    text = json.dumps([stored.scope, stored.counts, stored.requested_by])
    assert "maria" not in text
    assert "insulin" not in text


def test_a_dry_run_counts_the_same_and_changes_nothing(world):
    before = _all_rows()

    dry = erase_subject(tenant=world, subject_id="maria", requested_by="test", dry_run=True)

    assert _all_rows() == before
    assert dry.receipt["id"] is None
    real = erase_subject(tenant=world, subject_id="maria", requested_by="test")
    assert dry.receipt["counts"] == real.receipt["counts"]


def test_erase_tenant_empties_every_tenant_table_and_spares_the_other_tenant(world, other_tenant):
    neighbour = _tenant_rows(other_tenant)

    erasure = erase_tenant(tenant=world, requested_by="test")

    assert set(_tenant_rows(world).values()) == {0}
    assert _tenant_rows(other_tenant) == neighbour
    assert erasure.receipt["verified"] is True
    assert erasure.receipt["counts"]["projects"] == 1
    assert erasure.receipt["counts"]["memories"] == 6


def _run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_commands_print_and_list_receipts(world):
    dry = json.loads(
        _run("erase_subject", "--tenant", world.slug, "--subject", "maria", "--dry-run", "--json")
    )
    assert Memory.objects.filter(tenant=world, subject_id="maria").count() == 3
    done = json.loads(
        _run("erase_subject", "--tenant", world.slug, "--subject", "maria", "--json", "--yes")
    )
    tenant_dry = json.loads(_run("erase_tenant", "--tenant", world.slug, "--dry-run", "--json"))
    listed = json.loads(_run("erasure_receipts", "--json"))

    assert dry["counts"] == done["counts"]
    assert tenant_dry["counts"]["memories"] == 3  # maria-2's
    assert [r["id"] for r in listed] == [done["id"]]
    assert listed[0]["verified"] is True
    assert "Erased (verified)" in _run("erase_tenant", "--tenant", world.slug, "--yes")


def test_the_api_erases_the_callers_own_subject_only(tenant, agent, other_agent, superadmin):
    remember(tenant, "agent-a", SECRET)
    remember(tenant, "agent-b", SECRET)

    refused = agent.post("/api/v1/memory/erase", {"subject_id": "agent-b"})
    response = agent.post("/api/v1/memory/erase", {})
    missing = superadmin.post("/api/v1/memory/erase", {})
    operator = superadmin.post("/api/v1/memory/erase", {"subject_id": "agent-b", "dry_run": True})

    assert (refused.status_code, refused.json()["error"]["code"]) == (
        403,
        "erase_subject_forbidden",
    )
    assert response.status_code == 200
    assert response.json()["data"]["counts"]["memories"] == 1
    assert response.json()["data"]["verified"] is True
    assert (missing.status_code, missing.json()["error"]["code"]) == (422, "subject_required")
    assert operator.json()["data"]["counts"]["memories"] == 1
    assert list(Memory.objects.filter(tenant=tenant).values_list("subject_id", flat=True)) == [
        "agent-b"
    ]
    assert MemoryTombstone.objects.count() == 0
