"""A single user's assistant history, promoted session by session, then asked what holds now.

The history (``lab/eval_data/profile_history.json``) is a session every few days: two everyday
remarks drawn from a pool with a fixed seed, each answered by the assistant, and on the event
days the remarks that change the user's job, home, partner or diet. Each session goes to the
session tier as the API writes it and is promoted with the deployment's compiler, as an
unattended promotion would. Then every question is recalled (hybrid, limit 5): where the
current value ranks, and whether a stale value is among the five.
"""

from __future__ import annotations

import json
import random
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from apps.memory.models import PromotionJob, PromotionJobStatus
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    SessionTurnDraft,
    promotion_request,
    promotion_run,
    session_append_many,
)
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab.locomo.harness import evaluation_tenant_remove
from lab.locomo.promotion import replay_budget

DEFAULT_PATH = Path(__file__).resolve().parent / "eval_data" / "profile_history.json"
SUBJECT = "assistant-user"
START = datetime(2025, 1, 1, tzinfo=UTC)
RECALL_LIMIT = 5
SEED = 7


@dataclass(frozen=True)
class Question:
    question: str
    now: tuple[str, ...]
    then: tuple[str, ...]


@dataclass(frozen=True)
class History:
    days: int
    every: int
    filler: tuple[str, ...]
    replies: tuple[str, ...]
    events: dict[int, tuple[str, ...]]
    questions: tuple[Question, ...]


def load_history(path: Path = DEFAULT_PATH) -> History:
    data = json.loads(path.read_text(encoding="utf-8"))
    return History(
        days=int(data["days"]),
        every=int(data["every"]),
        filler=tuple(data["filler"]),
        replies=tuple(data["replies"]),
        events={int(day): tuple(remarks) for day, remarks in data["events"].items()},
        questions=tuple(
            Question(q["question"], tuple(q["now"]), tuple(q["then"])) for q in data["questions"]
        ),
    )


def sessions(history: History) -> list[tuple[datetime, list[str]]]:
    """The history's sessions in order: when, and the turns (user, assistant, …)."""
    rng = random.Random(SEED)  # noqa: S311 - a fixed draw of remarks, not a secret
    found = []
    for day in range(history.days):
        if day % history.every and day not in history.events:
            continue
        remarks = [*rng.sample(history.filler, 2), *history.events.get(day, ())]
        rng.shuffle(remarks)
        turns = []
        for remark in remarks:
            turns += [remark, rng.choice(history.replies)]
        found.append((START + timedelta(days=day * 2), turns))
    return found


def _promote(tenant: Tenant, history: History) -> int:
    count = 0
    for number, (when, turns) in enumerate(sessions(history)):
        session_id = f"chat-{number}"
        session_append_many(
            tenant=tenant,
            subject_id=SUBJECT,
            drafts=[
                SessionTurnDraft(
                    session_id=session_id,
                    content=content,
                    role="user" if index % 2 == 0 else "assistant",
                    ttl_seconds=3600,
                    metadata={},
                    occurred_at=when,
                )
                for index, content in enumerate(turns)
            ],
        )
        request = promotion_request(tenant=tenant, subject_id=SUBJECT, session_id=session_id)
        job = PromotionJob.objects.filter(pk=request.job_id).first() if request.job_id else None
        if job is not None and job.status == PromotionJobStatus.QUEUED:
            promotion_run(job_id=job.pk)
        count += 1
    return count


def _position(texts: list[str], words: tuple[str, ...]) -> int | None:
    return next(
        (rank for rank, text in enumerate(texts) if any(word in text.lower() for word in words)),
        None,
    )


def run(history: History) -> dict[str, Any]:
    started = time.perf_counter()
    tenant = tenant_create(
        slug=f"profile-history-{secrets.token_hex(4)}", name="profile_history_eval"
    )
    try:
        with replay_budget():
            promoted = _promote(tenant, history)
        asked = []
        for question in history.questions:
            texts = [
                hit.memory.text
                for hit in memory_recall(
                    tenant=tenant, subject_id=SUBJECT, query=question.question, limit=RECALL_LIMIT
                ).results
            ]
            asked.append(
                {
                    "question": question.question,
                    "current_rank": _position(texts, question.now),
                    "stale_rank": _position(texts, question.then),
                    "hits": texts,
                }
            )
    finally:
        evaluation_tenant_remove(tenant=tenant)
    return {
        "sessions": promoted,
        "questions": len(asked),
        "current_first": sum(item["current_rank"] == 0 for item in asked),
        "current_in_top": sum(item["current_rank"] is not None for item in asked),
        "stale_in_top": sum(item["stale_rank"] is not None for item in asked),
        "per_question": asked,
        "seconds": round(time.perf_counter() - started, 1),
    }
