"""Every per-subject bound counts its refusals in /metrics (``engram_events_total``), so an
operator sees which bound an agent runs into without reading logs."""

import re

import pytest
from rest_framework.test import APIClient

from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.knowledge.exceptions import ArticleQuotaExceeded
from apps.knowledge.services import article_create
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import (
    BudgetExceeded,
    HistoryQuotaExceeded,
    QuotaExceeded,
    SessionQuotaExceeded,
)
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_remember,
    memory_supersede,
    promotion_request,
    session_append,
)
from apps.tenancy.models import ApiKeyRole

pytestmark = pytest.mark.django_db


def _refusals(event: str) -> float:
    text = APIClient().get("/metrics").content.decode()
    match = re.search(rf'^engram_events_total\{{event="{re.escape(event)}"\}} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


def _turn(session="s"):
    return SessionTurnDraft(session_id=session, content="turn", ttl_seconds=60)


def _session_quota(tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn())


def _live_quota(tenant):
    memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="fact"))


def _history_quota(tenant):
    memory = memory_remember(tenant=tenant, subject_id="h", draft=MemoryDraft(text="v1"))
    memory_supersede(
        tenant=tenant, subject_id="h", memory_id=memory.pk, draft=MemoryDraft(text="v2")
    )


def _article_quota(tenant):
    viewer = Viewer(role=ApiKeyRole.USER, subject_id="curator")
    article_create(tenant=tenant, viewer=viewer, title="T", body="B", category="finding")


def _promotion_share(tenant):
    for session in ("s1", "s2"):
        session_append(tenant=tenant, subject_id="p", draft=_turn(session))
        session_append(tenant=tenant, subject_id="p", draft=_turn(session))
    promotion_request(tenant=tenant, subject_id="p", session_id="s1")
    promotion_request(tenant=tenant, subject_id="p", session_id="s2")


def _heavy_read_share(tenant):
    with (
        heavy_read_slot(tenant_id=tenant.pk, subject_id="r"),
        heavy_read_slot(tenant_id=tenant.pk, subject_id="r"),
    ):
        pass


@pytest.mark.parametrize(
    ("_case", "bounds", "refuse", "error", "event"),
    [
        (
            "session turns",
            {"SESSION_QUOTA_TURNS": 0},
            _session_quota,
            SessionQuotaExceeded,
            "memory_session.quota_exceeded",
        ),
        (
            "live memories",
            {"MEMORY_QUOTA_LIVE_ROWS": 0},
            _live_quota,
            QuotaExceeded,
            "memory.quota_exceeded",
        ),
        (
            "superseded history",
            {"MEMORY_QUOTA_SUPERSEDED_ROWS": 0},
            _history_quota,
            HistoryQuotaExceeded,
            "memory.history_quota_exceeded",
        ),
        (
            "articles",
            {"KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR": 0},
            _article_quota,
            ArticleQuotaExceeded,
            "knowledge_article.quota_exceeded",
        ),
        (
            "promotion share",
            {"PROMOTION_SUBJECT_BUDGET_PER_HOUR": 1},
            _promotion_share,
            BudgetExceeded,
            "memory_promotion.subject_budget_exceeded",
        ),
        (
            "heavy-read share",
            {"HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT": 1},
            _heavy_read_share,
            HeavyReadShed,
            "heavy_read.subject_shed",
        ),
    ],
)
def test_a_refusal_counts_in_metrics(tenant, settings, mocker, _case, bounds, refuse, error, event):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    for name, value in bounds.items():
        setattr(settings, name, value)
    before = _refusals(event)

    with pytest.raises(error):
        refuse(tenant)

    assert _refusals(event) == before + 1
