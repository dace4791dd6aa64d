from datetime import timedelta

import pytest
from django.core.management.base import CommandError
from django.utils import timezone

from apps.dataops.selectors import memory_stats
from apps.extraction.promotion.compiler import session_fingerprint
from apps.knowledge.services import article_archive
from apps.memory.models import Memory, PromotionJob, SessionMemory, SessionPromotion
from apps.memory.services import SessionTurnDraft, session_append_many
from apps.tenancy.services import tenant_halt
from tests.dataops.helpers import run, run_json
from tests.knowledge.helpers import CURATOR, publish
from tests.memory.helpers import remember


def _turns(tenant, subject_id, session_id, *contents, roles=None):
    roles = roles or ["user"] * len(contents)
    return session_append_many(
        tenant=tenant,
        subject_id=subject_id,
        drafts=[
            SessionTurnDraft(session_id=session_id, content=content, role=role, ttl_seconds=86_400)
            for content, role in zip(contents, roles, strict=True)
        ],
    )


def _job(tenant, subject_id, session_id, status, finished_at=None):
    return PromotionJob.objects.create(
        tenant=tenant,
        subject_id=subject_id,
        session_id=session_id,
        trigger="sweep",
        status=status,
        finished_at=finished_at,
    )


@pytest.fixture
def world(tenant, other_tenant, settings):
    settings.MEMORY_GRADUATION_RECALL_THRESHOLD = 3
    now = timezone.now()
    # agent-a: 3 live (2 explicit, 1 promoted), 1 superseded, 1 pending, 1 graduation-ready,
    # 1 already graduated.
    kept = remember(tenant, "agent-a", "Kept fact.")
    remember(tenant, "agent-a", "Pending fact.", embed=False)
    hot = remember(tenant, "agent-a", "Hot promoted fact.", source="promoted")
    old = remember(tenant, "agent-a", "Old fact.")
    Memory.objects.filter(pk=old.pk).update(superseded_by=kept, superseded_at=now, recall_count=9)
    Memory.objects.filter(pk=hot.pk).update(recall_count=3)
    Memory.objects.filter(pk=kept.pk).update(recall_count=5)
    # agent-b: 1 explicit, recalled twice (below the threshold).
    cold = remember(tenant, "agent-b", "Cold fact.")
    Memory.objects.filter(pk=cold.pk).update(recall_count=2)

    # Sessions of agent-a: s1 never promoted; s2 promoted and unchanged; s3 changed since its
    # watermark; s4 a single turn; s5 outside the sweep window; s6 only an expired turn.
    _turns(tenant, "agent-a", "s1", "hello", "hi", "bye")
    s2 = _turns(tenant, "agent-a", "s2", "ünïcode ✓", "answer", roles=["user", "assistant"])
    SessionPromotion.objects.create(
        tenant=tenant,
        subject_id="agent-a",
        session_id="s2",
        content_hash=session_fingerprint([(t.role, t.content) for t in s2]),
    )
    _turns(tenant, "agent-a", "s3", "first", "second")
    SessionPromotion.objects.create(
        tenant=tenant, subject_id="agent-a", session_id="s3", content_hash="0" * 64
    )
    _turns(tenant, "agent-a", "s4", "alone")
    s5 = _turns(tenant, "agent-a", "s5", "long", "ago")
    SessionMemory.objects.filter(seq__in=[t.seq for t in s5]).update(
        created_at=now - timedelta(seconds=settings.PROMOTION_SWEEP_WINDOW_SECONDS + 60)
    )
    s6 = _turns(tenant, "agent-a", "s6", "expired")
    SessionMemory.objects.filter(seq=s6[0].seq).update(expires_at=now - timedelta(seconds=1))
    # A reserved subject's session is never promoted, so it is no backlog.
    _turns(tenant, "engram:eval", "e1", "one", "two")

    _job(tenant, "agent-a", "s1", "queued")
    _job(tenant, "agent-a", "s3", "running")
    _job(tenant, "agent-a", "s7", "failed", finished_at=now - timedelta(hours=1))
    _job(tenant, "agent-a", "s8", "failed", finished_at=now - timedelta(hours=30))
    _job(tenant, "agent-b", "s9", "completed", finished_at=now)

    graduated_into = publish(tenant, "Published one")
    Memory.objects.filter(pk=kept.pk).update(graduated_at=now, graduated_article=graduated_into)
    publish(tenant, "Published two")
    publish(tenant, "A draft", status="draft")
    archived = publish(tenant, "Archived one")
    article_archive(tenant=tenant, viewer=CURATOR, article_id=archived.pk)

    # The other tenant: one memory, nothing else.
    remember(other_tenant, "agent-a", "Elsewhere.")
    return {"tenant": tenant, "other": other_tenant}


EMPTY_SUBJECT = {
    "memories_live": 0,
    "memories_superseded": 0,
    "embeddings_pending": 0,
    "memories_promoted": 0,
    "memories_explicit": 0,
    "graduation_backlog": 0,
    "session_turns": 0,
    "sessions": 0,
    "session_turns_expired": 0,
    "promotion_never_promoted": 0,
    "promotion_changed": 0,
    "promotion_jobs_queued": 0,
    "promotion_jobs_running": 0,
    "promotion_jobs_failed_24h": 0,
    "promotion_compiles_hour": 0,
    "session_bytes": 0,
    "articles_authored": 0,
}
AGENT_A = {
    **EMPTY_SUBJECT,
    "subject_id": "agent-a",
    "memories_live": 3,
    "memories_superseded": 1,
    "embeddings_pending": 1,
    "memories_promoted": 1,
    "memories_explicit": 2,
    "graduation_backlog": 1,
    "session_turns": 10,
    "sessions": 5,
    "session_turns_expired": 1,
    "promotion_never_promoted": 1,
    "promotion_changed": 1,
    "promotion_jobs_queued": 1,
    "promotion_jobs_running": 1,
    "promotion_jobs_failed_24h": 1,
    # Every job was reserved just now; the budget counts all but a dropped or skipped one.
    "promotion_compiles_hour": 4,
    # 59 bytes of content in 11 stored turns (the expired one too), each with "{}" metadata.
    "session_bytes": 59 + 11 * 2,
}
AGENT_B = {
    **EMPTY_SUBJECT,
    "subject_id": "agent-b",
    "memories_live": 1,
    "memories_explicit": 1,
    "promotion_compiles_hour": 1,
}
# The curator key that wrote the articles is a subject too: it is charged for them.
CURATOR_SUBJECT = {**EMPTY_SUBJECT, "subject_id": CURATOR.subject_id, "articles_authored": 4}
EVAL = {
    **EMPTY_SUBJECT,
    "subject_id": "engram:eval",
    "session_turns": 2,
    "sessions": 1,
    "session_bytes": 6 + 2 * 2,
}
SUBJECTS: list[dict] = sorted(
    [AGENT_A, AGENT_B, CURATOR_SUBJECT, EVAL], key=lambda row: str(row["subject_id"])
)


def test_stats_per_subject_and_tenant_are_exact(world):
    tenant = world["tenant"]

    body = run_json("memory_stats", "--tenant", tenant.slug)

    (stats,) = body["tenants"]
    assert stats["tenant"] == tenant.slug
    assert stats["halted"] is False
    assert stats["subjects"] == SUBJECTS
    assert stats["totals"] == {name: sum(row[name] for row in SUBJECTS) for name in EMPTY_SUBJECT}
    assert stats["articles"] == {"draft": 1, "published": 2, "archived": 1}
    assert stats["limits"] == {
        "memories_live": 10_000,
        "memories_superseded": 10_000,
        "session_turns": 50_000,
        "session_bytes": 256 * 1024 * 1024,
        "articles_authored": 10_000,
        "articles_per_tenant": 100_000,
        "promotion_compiles_hour": 20,
        "promotion_compiles_hour_per_tenant": 60,
    }
    assert stats["reembed_in_progress"] is None


def test_stats_cover_every_tenant_by_default(world):
    tenant, other = world["tenant"], world["other"]
    tenant_halt(tenant=other, reason="audit")

    body = run_json("memory_stats")

    by_slug = {entry["tenant"]: entry for entry in body["tenants"]}
    assert set(by_slug) == {tenant.slug, other.slug}
    assert by_slug[other.slug]["halted"] is True
    assert by_slug[other.slug]["subjects"] == [
        {**EMPTY_SUBJECT, "subject_id": "agent-a", "memories_live": 1, "memories_explicit": 1}
    ]
    assert by_slug[other.slug]["articles"] == {"draft": 0, "published": 0, "archived": 0}


def test_stats_query_count_does_not_grow_with_tenants_or_subjects(
    world, django_assert_max_num_queries
):
    with django_assert_max_num_queries(9):
        stats = memory_stats()

    assert len(stats) == 2
    assert sum(len(entry.subjects) for entry in stats) == 5


def test_stats_human_output_names_the_backlogs(world):
    text = run("memory_stats", "--tenant", world["tenant"].slug)

    assert "4 live (1 promoted, 3 explicit), 1 superseded, 1 pending embedding" in text
    assert "backlog 1 never promoted + 1 changed since watermark" in text
    assert "graduation backlog 1" in text
    assert "2 published" in text
    assert "per subject: memories_live 10000, memories_superseded 10000" in text
    assert "per tenant: articles 100000, promotion_compiles_hour 60" in text


def test_stats_unknown_tenant_fails(db):
    with pytest.raises(CommandError, match="not_found") as exc:
        run("memory_stats", "--tenant", "no-such-tenant")
    assert exc.value.returncode == 1


def test_a_memory_whose_graduated_article_was_deleted_is_in_the_backlog_again(tenant, settings):
    settings.MEMORY_GRADUATION_RECALL_THRESHOLD = 3
    memory = remember(tenant, "agent-a", "Kept fact.")
    Memory.objects.filter(pk=memory.pk).update(recall_count=5, graduated_at=timezone.now())

    stats = memory_stats(tenant=tenant)

    assert [s.graduation_backlog for s in stats[0].subjects] == [1]
