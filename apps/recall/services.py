"""Writes of merged recall: what serving a merge records, and the client's "referenced"
assertion (the third funnel stage)."""

from __future__ import annotations

import uuid

from apps.knowledge.services import knowledge_search_record, record_referenced
from apps.knowledge.viewer import Viewer
from apps.memory.services import memory_recall_record
from apps.recall.exceptions import InvalidRecallId
from apps.recall.selectors import MergedRecall
from apps.tenancy.scope import RequestScope


def parse_recall_id(recall_id: object) -> uuid.UUID:
    """A merged recall's id, as ``/recall/{recall_id}/referenced`` names it (422
    ``invalid_recall_id``)."""
    try:
        return uuid.UUID(str(recall_id))
    except ValueError as exc:
        raise InvalidRecallId("recall_id must be a UUID.") from exc


def recall_referenced(*, scope: RequestScope, recall_id: str, article_ids: object) -> int:
    """Record that the caller used these articles from merged recall ``recall_id``.

    ``recall_id`` is the search id stamped on the knowledge half's ``surfaced`` events, so
    only articles that recall surfaced in the caller's tenant are accepted; anything else —
    a memory id, an unknown or foreign recall id — fails the whole call with 422
    ``not_surfaced`` and writes nothing.
    """
    parsed = parse_recall_id(recall_id)
    return record_referenced(
        tenant=scope.tenant,
        viewer=Viewer.from_scope(scope),
        api_key_id=scope.api_key.pk,
        search_id=parsed,
        article_ids=article_ids,  # type: ignore[arg-type] # validated by the callee
    )


def recall_context_record(*, scope: RequestScope, merged: MergedRecall) -> None:
    """The memory half's recall bump, and the knowledge half's ``surfaced`` events (under the
    merge's ``recall_id``, which ``referenced`` later validates) and history mark."""
    if merged.memory_result is not None:
        memory_recall_record(result=merged.memory_result)
    if merged.knowledge_result is not None:
        knowledge_search_record(
            tenant=scope.tenant,
            viewer=Viewer.from_scope(scope),
            api_key_id=scope.api_key.pk,
            result=merged.knowledge_result,
        )
