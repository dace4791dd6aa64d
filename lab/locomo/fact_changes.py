"""Facts that change, on LoCoMo: does recall rank the current value above the stale one, does
``as_of`` bring the earlier value back, and how often does the change detector retire a fact
that had not changed?

The chains (``lab/eval_data/locomo_fact_changes.json``) list, for facts that change between
sessions (a number of dogs, a job, a relationship), each state with the turns (``dia_id``) that
state it. Each conversation is written twice, in a throwaway tenant, one subject each:

* ``direct``: LoCoMo's observations (short facts, each citing its turns) as explicit memories,
  session by session, each with the session's time as ``occurred_at``;
* ``promoted``: the turns to the session tier and every session promoted in order with the
  deployment's compiler, as ``promotion_eval --dataset locomo`` does.

A memory states a state when the turns it came from (an observation's citations, a promoted
memory's source turns) include one of that state's turns. For each change (state k → k+1):

* **current first**: recalled (limit 10, no ``as_of``) for the chain's question, a memory of a
  later state ranks above every memory of state k (which may be gone: retired);
* **as_of**: recalled at the last session stating state k (plus an hour), a memory of state k
  ranks above every memory of a later state;

each counted only where both states have a memory in that condition. **Precision**: every
automatic supersede (``changed_value:*``) is correct when the retired memory states an earlier
state of a chain and its replacement a later state of the same chain; any other supersede
counts as wrong, so the figure is a lower bound (the unmatched pairs are listed to read).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from apps.memory.models import Memory, PromotionJob, PromotionJobStatus, SessionMemory
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    MemoryDraft,
    memory_create_many,
    memory_embed_pending,
    promotion_request,
    promotion_run,
    session_append_many,
)
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab.locomo.dataset import Conversation
from lab.locomo.harness import EMBED_BATCH, EmbeddingCache, evaluation_tenant_remove
from lab.locomo.promotion import replay_budget, session_datetime, session_key, turn_drafts

DIRECT, PROMOTED = "direct", "promoted"
CONDITIONS = (DIRECT, PROMOTED)
RECALL_LIMIT = 10
#: ``as_of`` for a change: the last session that stated the earlier value, an hour on.
AS_OF_AFTER_SESSION = timedelta(hours=1)
DEFAULT_PATH = Path(__file__).resolve().parent.parent / "eval_data" / "locomo_fact_changes.json"
CHANGED_VALUE = "changed_value"

Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class State:
    label: str
    evidence: frozenset[str]
    #: Words (lower case) a memory stating the state holds; empty: citing a turn is enough.
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """What a memory came from (the turns it cites) and what it says (lower-cased)."""

    dia_ids: frozenset[str]
    text: str


@dataclass(frozen=True)
class Chain:
    id: str
    split: str
    conversation: str
    speaker: str
    attribute: str
    question: str
    states: tuple[State, ...]


def load_chains(path: Path = DEFAULT_PATH) -> list[Chain]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Chain(
            id=item["id"],
            split=item["split"],
            conversation=item["conversation"],
            speaker=item["speaker"],
            attribute=item["attribute"],
            question=item["question"],
            states=tuple(
                State(
                    label=state["label"],
                    evidence=frozenset(state["evidence"]),
                    terms=tuple(term.lower() for term in state.get("terms", ())),
                )
                for state in item["states"]
            ),
        )
        for item in data["chains"]
    ]


# --- scoring (pure) ----------------------------------------------------------------------------


def states_of(chain: Chain, source: Source) -> set[int]:
    """The states of ``chain`` a memory states: it cites one of the state's turns and holds
    one of its terms (a turn often says several things; the terms pick the one that counts)."""
    return {
        index
        for index, state in enumerate(chain.states)
        if source.dia_ids & state.evidence
        and (not state.terms or any(term in source.text for term in state.terms))
    }


def first_rank(
    ranked: Sequence[Source], chain: Chain, wanted: Callable[[set[int]], bool]
) -> int | None:
    for rank, source in enumerate(ranked, start=1):
        if wanted(states_of(chain, source)):
            return rank
    return None


def only(k: int) -> Callable[[set[int]], bool]:
    """A memory of state ``k`` and of no later state."""
    return lambda found: k in found and max(found) == k


def at(k: int) -> Callable[[set[int]], bool]:
    """A memory of state ``k``."""
    return lambda found: k in found


def after(k: int) -> Callable[[set[int]], bool]:
    """A memory of a state later than ``k``."""
    return lambda found: any(index > k for index in found)


def ahead(first: int | None, second: int | None) -> bool | None:
    """``first`` was recalled and ranks above ``second`` (which may be absent); None when
    neither was recalled (the ranking decided nothing)."""
    if first is None and second is None:
        return None
    return first is not None and (second is None or first < second)


def supersede_correct(chains: Sequence[Chain], old: Source, new: Source) -> bool:
    """A retired memory states an earlier state of a chain, its replacement a later one."""
    for chain in chains:
        before, after = states_of(chain, old), states_of(chain, new)
        if before and after and min(before) < max(after):
            return True
    return False


# --- building the stores ------------------------------------------------------------------------


def _observation_drafts(conversation: Conversation) -> list[list[MemoryDraft]]:
    """LoCoMo's observations, one batch per session, dated by the session."""
    dates = {session.number: session_datetime(session) for session in conversation.sessions}
    batches: dict[int, list[MemoryDraft]] = {}
    for observation in conversation.observations:
        batches.setdefault(observation.session, []).append(
            MemoryDraft(
                text=observation.text,
                occurred_at=dates.get(observation.session),
                metadata={"source_dia_ids": list(observation.source_dia_ids)},
            )
        )
    return [batches[number] for number in sorted(batches)]


def _embed(ids: list[str], cache: EmbeddingCache | None) -> None:
    pending = ids if cache is None else cache.fill(ids)
    for start in range(0, len(pending), EMBED_BATCH):
        run = memory_embed_pending(memory_ids=pending[start : start + EMBED_BATCH])
        if run.unavailable:
            raise RuntimeError(f"embeddings unavailable: {run.unavailable}")
    if cache is not None:
        cache.learn(pending)


def build_direct(
    *, tenant: Tenant, subject_id: str, conversation: Conversation, cache: EmbeddingCache | None
) -> None:
    ids: list[str] = []
    for drafts in _observation_drafts(conversation):
        created = memory_create_many(tenant=tenant, subject_id=subject_id, drafts=drafts)
        ids.extend(str(memory.pk) for memory in created)
    _embed(ids, cache)


def build_promoted(*, tenant: Tenant, subject_id: str, conversation: Conversation) -> None:
    with replay_budget():
        _promote_sessions(tenant=tenant, subject_id=subject_id, conversation=conversation)


def _promote_sessions(*, tenant: Tenant, subject_id: str, conversation: Conversation) -> None:
    from config.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        for session in conversation.sessions:
            drafts = turn_drafts(conversation, session)
            session_append_many(tenant=tenant, subject_id=subject_id, drafts=drafts)
            request = promotion_request(
                tenant=tenant,
                subject_id=subject_id,
                session_id=session_key(conversation.sample_id, session),
            )
            job = (
                PromotionJob.objects.filter(pk=request.job_id).first()
                if request.job_id is not None
                else None
            )
            if job is not None and job.status == PromotionJobStatus.QUEUED:
                promotion_run(job_id=job.pk)
    finally:
        app.conf.task_always_eager = eager


def memory_sources(*, tenant: Tenant, subject_id: str) -> dict[Any, Source]:
    """Every memory of the subject (live or not) → the turns it came from and its text."""
    rows = Memory.objects.filter(tenant=tenant, subject_id=subject_id).values_list(
        "pk", "metadata", "source_turn_seqs", "text"
    )
    seqs = {seq for _pk, _metadata, turn_seqs, _text in rows for seq in turn_seqs}
    turn_dia = (
        dict(
            SessionMemory.objects.filter(
                tenant=tenant, subject_id=subject_id, seq__in=seqs
            ).values_list("seq", "metadata__dia_id")
        )
        if seqs
        else {}
    )
    sources: dict[Any, Source] = {}
    for pk, metadata, turn_seqs, text in rows:
        cited = set(metadata.get("source_dia_ids", []))
        cited |= {turn_dia[seq] for seq in turn_seqs if turn_dia.get(seq)}
        sources[pk] = Source(dia_ids=frozenset(cited), text=text.lower())
    return sources


# --- asking ---------------------------------------------------------------------------------------


@dataclass
class ChangeResult:
    chain: str
    split: str
    condition: str
    change: int
    #: Both states have a memory in this condition.
    evaluable: bool
    #: None when recall returned neither value (the ranking decided nothing).
    current_first: bool | None
    #: The earlier state was last stated in a session before the later one's first.
    as_of_checked: bool
    as_of_earlier: bool | None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class SupersedeResult:
    split: str
    condition: str
    correct: bool
    old: str
    new: str
    reason: str


@dataclass
class Run:
    changes: list[ChangeResult] = field(default_factory=list)
    supersedes: list[SupersedeResult] = field(default_factory=list)
    flagged: dict[str, int] = field(default_factory=dict)
    memories: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    tenants_removed: int = 0


def _session_times(conversation: Conversation) -> dict[str, datetime]:
    """dia_id → the time of its session."""
    times: dict[str, datetime] = {}
    for session in conversation.sessions:
        when = session_datetime(session)
        if when is None:
            continue
        for turn in session.turns:
            times[turn.dia_id] = when
    return times


def _ranked(
    *,
    tenant: Tenant,
    subject_id: str,
    question: str,
    sources: dict[Any, Source],
    as_of: datetime | None,
) -> list[Source]:
    result = memory_recall(
        tenant=tenant, subject_id=subject_id, query=question, limit=RECALL_LIMIT, as_of=as_of
    )
    empty = Source(dia_ids=frozenset(), text="")
    return [sources.get(hit.memory.pk, empty) for hit in result.results]


def _ask(
    *,
    tenant: Tenant,
    subject_id: str,
    condition: str,
    chains: Sequence[Chain],
    conversation: Conversation,
    run: Run,
) -> None:
    sources = memory_sources(tenant=tenant, subject_id=subject_id)
    times = _session_times(conversation)
    for chain in chains:
        present = set().union(*(states_of(chain, source) for source in sources.values()))
        plain = _ranked(
            tenant=tenant,
            subject_id=subject_id,
            question=chain.question,
            sources=sources,
            as_of=None,
        )
        for k in range(len(chain.states) - 1):
            evaluable = k in present and any(index > k for index in present)
            current_first = as_of_earlier = None
            as_of_checked = False
            detail: dict[str, Any] = {}
            if evaluable:
                stale = first_rank(plain, chain, only(k))
                later = first_rank(plain, chain, after(k))
                current_first = ahead(later, stale)
                detail["plain"] = {"stale": stale, "later": later}
                stale_times = [times[d] for d in chain.states[k].evidence if d in times]
                later_times = [
                    times[d]
                    for state in chain.states[k + 1 :]
                    for d in state.evidence
                    if d in times
                ]
                as_of = max(stale_times) + AS_OF_AFTER_SESSION if stale_times else None
                if as_of is not None and later_times and as_of < min(later_times):
                    then = _ranked(
                        tenant=tenant,
                        subject_id=subject_id,
                        question=chain.question,
                        sources=sources,
                        as_of=as_of,
                    )
                    stale_then = first_rank(then, chain, at(k))
                    later_then = first_rank(then, chain, after(k))
                    as_of_checked = True
                    as_of_earlier = ahead(stale_then, later_then)
                    detail["as_of"] = {
                        "at": as_of.isoformat(),
                        "stale": stale_then,
                        "later": later_then,
                    }
            run.changes.append(
                ChangeResult(
                    chain=chain.id,
                    split=chain.split,
                    condition=condition,
                    change=k,
                    evaluable=evaluable,
                    current_first=current_first,
                    as_of_checked=as_of_checked,
                    as_of_earlier=as_of_earlier,
                    detail=detail,
                )
            )
    split = chains[0].split if chains else ""
    retired = Memory.objects.filter(
        tenant=tenant, subject_id=subject_id, superseded_by__isnull=False
    ).values_list("pk", "text", "superseded_by_id")
    replacing = dict(
        Memory.objects.filter(tenant=tenant, subject_id=subject_id).values_list(
            "pk", "supersede_reason"
        )
    )
    texts = dict(
        Memory.objects.filter(tenant=tenant, subject_id=subject_id).values_list("pk", "text")
    )
    for pk, text, successor in retired:
        reason = replacing.get(successor, "")
        if not reason.startswith(CHANGED_VALUE):
            continue
        run.supersedes.append(
            SupersedeResult(
                split=split,
                condition=condition,
                correct=supersede_correct(chains, sources[pk], sources[successor]),
                old=text,
                new=texts[successor],
                reason=reason,
            )
        )
    flagged = (
        Memory.objects.filter(tenant=tenant, subject_id=subject_id)
        .exclude(conflicts_with=[])
        .count()
    )
    run.flagged[f"{condition}:{split}"] = run.flagged.get(f"{condition}:{split}", 0) + flagged
    run.memories[f"{condition}:{split}"] = run.memories.get(f"{condition}:{split}", 0) + len(
        sources
    )


def run_benchmark(
    conversations: Sequence[Conversation],
    chains: Sequence[Chain],
    *,
    conditions: Sequence[str] = CONDITIONS,
    cache: EmbeddingCache | None = None,
    progress: Progress | None = None,
) -> Run:
    """Build each condition for every conversation with chains, ask, remove the tenants."""
    run = Run()
    started = time.perf_counter()
    for conversation in conversations:
        mine = [chain for chain in chains if chain.conversation == conversation.sample_id]
        if not mine:
            continue
        tenant = tenant_create(
            slug=f"fact-change-eval-{secrets.token_hex(4)}",
            name=f"fact_change_eval (LoCoMo {conversation.sample_id})",
        )
        try:
            for condition in conditions:
                subject_id = f"locomo-{condition}"
                if condition == DIRECT:
                    build_direct(
                        tenant=tenant, subject_id=subject_id, conversation=conversation, cache=cache
                    )
                else:
                    build_promoted(tenant=tenant, subject_id=subject_id, conversation=conversation)
                _ask(
                    tenant=tenant,
                    subject_id=subject_id,
                    condition=condition,
                    chains=mine,
                    conversation=conversation,
                    run=run,
                )
                if progress is not None:
                    progress(conversation.sample_id, condition)
        finally:
            evaluation_tenant_remove(tenant=tenant)
            run.tenants_removed += 1
    run.seconds = time.perf_counter() - started
    return run


def _share(values: Sequence[bool | None]) -> dict[str, Any]:
    """Over the checks where recall returned one of the two values (``n``), and over every
    check (``strict``: returning neither counts as a failure)."""
    decided = [value for value in values if value is not None]
    ok = sum(1 for value in decided if value)
    return {
        "n": len(decided),
        "ok": ok,
        "rate": round(ok / len(decided), 3) if decided else None,
        "neither_recalled": len(values) - len(decided),
        "strict_rate": round(ok / len(values), 3) if values else None,
    }


def report(run: Run, *, verbose: bool = False) -> dict[str, Any]:
    """Per split and condition: current first, as_of, supersede precision."""
    data: dict[str, Any] = {
        "splits": {},
        "seconds": round(run.seconds, 1),
        "tenants_removed": run.tenants_removed,
    }
    splits = sorted({c.split for c in run.changes})
    for split in splits:
        block: dict[str, Any] = {}
        for condition in CONDITIONS:
            changes = [c for c in run.changes if c.split == split and c.condition == condition]
            if not changes:
                continue
            supersedes = [
                s for s in run.supersedes if s.split == split and s.condition == condition
            ]
            block[condition] = {
                "changes": len(changes),
                "evaluable": sum(1 for c in changes if c.evaluable),
                "current_first": _share([c.current_first for c in changes if c.evaluable]),
                "as_of_earlier": _share([c.as_of_earlier for c in changes if c.as_of_checked]),
                "supersedes": len(supersedes),
                "supersede_precision": _share([s.correct for s in supersedes]),
                "flagged_memories": run.flagged.get(f"{condition}:{split}", 0),
                "memories": run.memories.get(f"{condition}:{split}", 0),
            }
            if verbose:
                block[condition]["per_change"] = [
                    {
                        "chain": c.chain,
                        "change": c.change,
                        "current_first": c.current_first,
                        "as_of_earlier": c.as_of_earlier,
                        **c.detail,
                    }
                    for c in changes
                ]
                block[condition]["unmatched_supersedes"] = [
                    {"old": s.old, "new": s.new, "reason": s.reason}
                    for s in supersedes
                    if not s.correct
                ]
        data["splits"][split] = block
    return data
