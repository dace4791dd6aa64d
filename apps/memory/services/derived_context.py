"""Retrieval context the service derives itself: a memory's neighbours in its session.

A conversation's turns are written one memory each, and a reply ("Yes, last Tuesday!") is
often the evidence for a question phrased like the turn before it. So when a memory says
which session it belongs to (``metadata.session_id``, ``session``, ``thread_id`` or
``conversation_id``), the service threads it: the memory gets the next position in that
session (``context_thread``, ``thread_seq``; per tenant, subject and project partition), and
its ``derived_context`` holds the text of up to ``MEMORY_DERIVED_CONTEXT_NEIGHBOURS`` live
memories on each side of it in the session. Any memory whose metadata carries a date
(``session_date`` or ``date``, ISO 8601) also gets that date in words ("8 May 2023").

``derived_context`` is keyword-indexed at weight C beside ``text`` (A) and the client's
``context`` (B), counted like the client's context; it is never embedded and never returned.
It is bounded (``MEMORY_DERIVED_CONTEXT_MAX_CHARS``, each neighbour cut to
``MEMORY_DERIVED_CONTEXT_NEIGHBOUR_MAX_CHARS``). A memory the client gave a ``context`` keeps
exactly that and gets no derived context (the client said how to situate it); it still serves
as a neighbour of the others. Memories without a session key that are not conversation turns
are not linked to anything: a batch of unrelated facts must not index each other's words.
Promoted memories are facts distilled from a session and are not threaded either. Such an
unthreaded memory quotes instead the memories it replaced (:func:`compose_replaced`), so a
question asked in the old words finds what holds now.

A conversation turn written without a session key still has neighbours: the turns its agent
wrote just before and after it. A memory shaped like a turn (``"Speaker: text"``, see
:func:`is_turn`) continues the conversation of the subject's previous write when that write
was a turn too, in the same project partition, at most ``MEMORY_IMPLICIT_THREAD_GAP_SECONDS``
apart in ``occurred_at``, and on the same date where both carry one in metadata; otherwise it
starts a new conversation (``context_thread`` ``"turns:<id>"``). A live agent's sessions are
told apart by the pauses between them, a replayed history by the times or dates it sends.
``MEMORY_IMPLICIT_THREADS`` (``ENGRAM_MEMORY_IMPLICIT_THREADS``) off: such turns stay unlinked.
``MEMORY_DERIVED_CONTEXT_ENABLED`` (``ENGRAM_MEMORY_DERIVED_CONTEXT``) off: new writes get none
(existing rows keep theirs).

Every change to a session keeps its neighbours right: a write appends and refreshes the
memories before it, a supersede puts the new version in the old one's place (the old
version, now history, quotes nobody), a forget removes the forgotten text from every
neighbour that quoted it. All of it runs inside the
caller's transaction with the subject's scope lock held, so positions cannot race.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db.models import Max, Q

from apps.extraction.changes import field_label
from apps.memory.models import SESSION_ID_MAX_LENGTH, Memory, MemorySource
from apps.tenancy.models import Tenant

#: Metadata keys that name a memory's session, in order of precedence.
THREAD_KEYS = ("session_id", "session", "thread_id", "conversation_id")
#: Metadata keys that may carry the session's date (ISO 8601).
DATE_KEYS = ("session_date", "date")
_FIELDS = ("id", "text", "context", "derived_context", "metadata", "source", "thread_seq")
#: The thread key prefix of a conversation the service inferred (no session key was sent);
#: never a prefix of a client's key, which always starts with one of ``THREAD_KEYS``.
IMPLICIT_THREAD_PREFIX = "turns:"
#: A conversation turn: a short speaker label (one to three words, or a chat role) and a colon.
_TURN = re.compile(
    r"\s*(?P<label>[A-Z][\w'’.-]{0,30}(?: [A-Z][\w'’.-]{0,30}){0,2}|"
    r"(?i:user|assistant|human|ai|bot))\s?:\s+\S"
)

ThreadRef = tuple[uuid.UUID | None, str]


def thread_key(metadata: Mapping[str, Any]) -> str:
    """The session a memory's metadata names (``""``: none), e.g. ``"session:3"``."""
    for key in THREAD_KEYS:
        value = metadata.get(key)
        if isinstance(value, bool) or not isinstance(value, str | int):
            continue
        text = str(value).strip()
        if text:
            return f"{key}:{text}"[:SESSION_ID_MAX_LENGTH]
    return ""


def is_turn(text: str) -> bool:
    """Whether ``text`` reads as one conversation turn: ``"Caroline: I went to the group."``,
    ``"user: remind me at 5"``. A note's field (``"Location: Berlin"``) is no speaker."""
    match = _TURN.match(text)
    return match is not None and not field_label(match.group("label"))


def _parse_date(value: object) -> date | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None


def metadata_date(metadata: Mapping[str, Any]) -> date | None:
    """The date the metadata carries (``session_date`` or ``date``, ISO 8601), if any."""
    for key in DATE_KEYS:
        day = _parse_date(metadata.get(key))
        if day is not None:
            return day
    return None


def date_words(metadata: Mapping[str, Any]) -> str:
    """The date the metadata carries, as words a question would use ("8 May 2023"), or ``""``."""
    day = metadata_date(metadata)
    return f"{day.day} {day:%B %Y}" if day is not None else ""


def derives(memory: Memory) -> bool:
    """Whether the service derives this memory's context (client context wins)."""
    return memory.source == MemorySource.EXPLICIT and not memory.context


def _joined(memory: Memory, texts: Iterable[str]) -> str:
    """The memory's date in words (where the service derives its context), then ``texts``,
    each and the whole cut to their bounds."""
    cap = settings.MEMORY_DERIVED_CONTEXT_NEIGHBOUR_MAX_CHARS
    parts = [date_words(memory.metadata or {}) if derives(memory) else ""]
    parts.extend(text.strip()[:cap] for text in texts)
    return "\n".join(part for part in parts if part)[: settings.MEMORY_DERIVED_CONTEXT_MAX_CHARS]


def _compose(memory: Memory, neighbours: Iterable[Memory]) -> str:
    if not derives(memory):
        return ""
    return _joined(memory, (neighbour.text for neighbour in neighbours))


def quotes_replaced(memory: Memory) -> bool:
    """Whether ``memory``'s derived context quotes the memories it replaced: one the service
    does not thread (a fact, a promoted memory; a thread's turn has its neighbours) and the
    client gave no context of."""
    enabled: bool = settings.MEMORY_DERIVED_CONTEXT_ENABLED
    return enabled and not memory.context_thread and not memory.context


def compose_replaced(memory: Memory, replaced: Iterable[str]) -> str:
    """The derived context of a memory that replaced others: its date, then the texts it
    replaced, so that a question asked in the old words finds what holds now ("Does the user
    have a hamster?" finds "Peanut died over the weekend", which replaced "The user has a
    hamster named Peanut")."""
    return _joined(memory, replaced)


def _derived(sequence: Sequence[Memory], index: int) -> str:
    span = settings.MEMORY_DERIVED_CONTEXT_NEIGHBOURS
    start, stop = max(0, index - span), min(len(sequence), index + span + 1)
    return _compose(sequence[index], [sequence[i] for i in range(start, stop) if i != index])


def _thread_rows(tenant: Tenant, subject_id: str, ref: ThreadRef) -> Any:
    project_id, thread = ref
    partition = Q(project__isnull=True) if project_id is None else Q(project_id=project_id)
    return (
        Memory.objects.filter(
            partition,
            tenant=tenant,
            subject_id=subject_id,
            context_thread=thread,
            superseded_by__isnull=True,
        )
        .only(*_FIELDS)
        .order_by("thread_seq", "created_at", "id")
    )


def thread_new_memories(
    *, tenant: Tenant, subject_id: str, memories: Sequence[Memory]
) -> list[Memory]:
    """Before insert: give each new memory its session position and derived context.

    Returns the existing memories whose derived context changed (they gained a following
    neighbour); the caller saves them.
    """
    span = settings.MEMORY_DERIVED_CONTEXT_NEIGHBOURS
    threads: dict[ThreadRef, list[Memory]] = {}
    if not settings.MEMORY_DERIVED_CONTEXT_ENABLED:
        return []
    for memory in memories:
        memory.context_thread = (
            thread_key(memory.metadata or {}) if memory.source == MemorySource.EXPLICIT else ""
        )
    if settings.MEMORY_IMPLICIT_THREADS:
        _continue_conversations(tenant=tenant, subject_id=subject_id, memories=memories)
    for memory in memories:
        if memory.context_thread:
            threads.setdefault((memory.project_id, memory.context_thread), []).append(memory)
        else:
            memory.derived_context = _compose(memory, [])
    changed: list[Memory] = []
    for ref, new in threads.items():
        rows = _thread_rows(tenant, subject_id, ref)
        last = rows.aggregate(last=Max("thread_seq"))["last"] or 0
        for offset, memory in enumerate(new, start=1):
            memory.thread_seq = last + offset
        # The last `span` memories gain following neighbours; re-deriving them needs their
        # own `span` predecessors too.
        before = list(reversed(rows.order_by("-thread_seq", "-created_at", "-id")[: 2 * span]))
        sequence = [*before, *new]
        for index in range(max(0, len(before) - span), len(sequence)):
            memory, derived = sequence[index], _derived(sequence, index)
            if index >= len(before):
                memory.derived_context = derived
            elif derived != memory.derived_context:
                memory.derived_context = derived
                changed.append(memory)
    return changed


def takes_place_of(new: Memory, old: Memory) -> bool:
    """Whether ``new``, superseding ``old``, takes ``old``'s place in its session: it is an
    explicit memory of the same project partition that names the same session, or a turn
    without a session key replacing a turn of an inferred conversation."""
    if not old.context_thread or new.source != MemorySource.EXPLICIT:
        return False
    if new.project_id != old.project_id:
        return False
    key = thread_key(new.metadata or {})
    if old.context_thread.startswith(IMPLICIT_THREAD_PREFIX):
        return not key and is_turn(new.text)
    return key == old.context_thread


def _implicit_turn(memory: Memory) -> bool:
    return (
        memory.source == MemorySource.EXPLICIT
        and not memory.context_thread
        and is_turn(memory.text)
    )


def _same_conversation(previous: Memory, memory: Memory) -> bool:
    """Whether ``memory`` continues the inferred conversation ``previous`` belongs to."""
    if not previous.context_thread.startswith(IMPLICIT_THREAD_PREFIX):
        return False
    if previous.project_id != memory.project_id:
        return False
    if memory.occurred_at is None or previous.occurred_at is None:
        return False  # a row built without a time: nothing says the two were one sitting
    pause = abs((memory.occurred_at - previous.occurred_at).total_seconds())
    if pause > settings.MEMORY_IMPLICIT_THREAD_GAP_SECONDS:
        return False
    day, previous_day = metadata_date(memory.metadata or {}), metadata_date(previous.metadata or {})
    return day is None or previous_day is None or day == previous_day


def _last_explicit_write(tenant: Tenant, subject_id: str, project_id: uuid.UUID | None) -> Any:
    partition = Q(project__isnull=True) if project_id is None else Q(project_id=project_id)
    return (
        Memory.objects.filter(
            partition, tenant=tenant, subject_id=subject_id, source=MemorySource.EXPLICIT
        )
        .only("id", "context_thread", "project_id", "occurred_at", "metadata")
        .order_by("-created_at", "-id")
        .first()
    )


def _continue_conversations(*, tenant: Tenant, subject_id: str, memories: Sequence[Memory]) -> None:
    """Give each turn written without a session key the inferred conversation of the write
    before it in its project partition (this batch's, else the subject's last), or a new one."""
    previous: dict[uuid.UUID | None, Memory | None] = {}
    for memory in memories:
        partition = memory.project_id
        if _implicit_turn(memory):
            if partition not in previous:  # read only when a turn needs it
                previous[partition] = _last_explicit_write(tenant, subject_id, partition)
            before = previous[partition]
            memory.context_thread = (
                before.context_thread
                if before is not None and _same_conversation(before, memory)
                else f"{IMPLICIT_THREAD_PREFIX}{memory.pk.hex}"
            )
        if memory.source == MemorySource.EXPLICIT:
            previous[partition] = memory


def refresh_threads(
    *, tenant: Tenant, subject_id: str, around: Mapping[ThreadRef, Iterable[int]]
) -> int:
    """Re-derive the live memories within reach of the given session positions (after a
    supersede or a forget changed who sits there); returns the rows updated."""
    span = settings.MEMORY_DERIVED_CONTEXT_NEIGHBOURS
    updated = 0
    for ref, positions in around.items():
        seqs = sorted(set(positions))
        if not seqs or not ref[1]:
            continue
        rows = _thread_rows(tenant, subject_id, ref)
        # Read 2 × span live rows past each end: the rows within span of a changed position
        # need their own span of neighbours.
        below = list(
            rows.filter(thread_seq__lt=seqs[0]).order_by("-thread_seq", "-created_at", "-id")[
                : 2 * span
            ]
        )
        above = list(rows.filter(thread_seq__gt=seqs[-1])[: 2 * span])
        middle = list(rows.filter(thread_seq__gte=seqs[0], thread_seq__lte=seqs[-1]))
        sequence = [*reversed(below), *middle, *above]
        lo = len(below) - min(span, len(below))
        hi = len(below) + len(middle) + min(span, len(above))
        stale = []
        for index in range(lo, hi):
            memory = sequence[index]
            derived = _derived(sequence, index)
            if derived != memory.derived_context:
                memory.derived_context = derived
                stale.append(memory)
        Memory.objects.bulk_update(stale, ["derived_context"])
        updated += len(stale)
    return updated
