"""Retrieval context the service derives from a memory's neighbours in its session."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    IMPLICIT_THREAD_PREFIX,
    MemoryDraft,
    is_turn,
    memory_create_many,
    memory_embed_pending,
    memory_forget,
    memory_forget_any,
    memory_remember,
    memory_supersede,
)
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def _turns(texts, *, session="1", date="2023-05-08T13:56:00", **extra):
    return [
        MemoryDraft(text=text, metadata={"session": session, "session_date": date}, **extra)
        for text in texts
    ]


def _derived(memories):
    by_id = {
        memory.pk: memory.derived_context
        for memory in Memory.objects.filter(pk__in=[m.pk for m in memories])
    }
    return [by_id[memory.pk] for memory in memories]


def _lines(derived):
    return derived.split("\n")


def test_a_session_written_in_one_batch_indexes_two_neighbours_each_side_and_its_date(tenant):
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_turns(["t1", "t2", "t3", "t4", "t5", "t6"])
    )

    derived = [_lines(d) for d in _derived(memories)]
    assert derived[0] == ["8 May 2023", "t2", "t3"]
    assert derived[2] == ["8 May 2023", "t1", "t2", "t4", "t5"]
    assert derived[5] == ["8 May 2023", "t4", "t5"]
    # Never the memory itself, never embedded, never returned.
    texts = ["t1", "t2", "t3", "t4", "t5", "t6"]
    assert all(text not in lines for text, lines in zip(texts, derived, strict=True))


def test_single_writes_to_one_session_link_to_earlier_and_later_writes(tenant):
    written = [
        memory_remember(tenant=tenant, subject_id="a", draft=draft)
        for draft in _turns(["first", "second", "third", "fourth"])
    ]

    derived = [_lines(d) for d in _derived(written)]
    assert derived[0] == ["8 May 2023", "second", "third"]
    assert derived[1] == ["8 May 2023", "first", "third", "fourth"]
    assert derived[3] == ["8 May 2023", "second", "third"]
    seqs = Memory.objects.filter(pk__in=[w.pk for w in written]).values_list("thread_seq")
    assert sorted(seq or 0 for (seq,) in seqs) == [1, 2, 3, 4]


def test_neighbours_come_only_from_the_same_tenant_subject_project_and_session(
    tenant, other_tenant
):
    project = ProjectFactory.create(tenant=tenant)
    memory_create_many(tenant=tenant, subject_id="b", drafts=_turns(["other subject"]))
    memory_create_many(tenant=other_tenant, subject_id="a", drafts=_turns(["other tenant"]))
    memory_create_many(
        tenant=tenant, subject_id="a", drafts=_turns(["other project"], project_id=project.pk)
    )
    memory_create_many(tenant=tenant, subject_id="a", drafts=_turns(["other session"], session="2"))
    mine = memory_create_many(tenant=tenant, subject_id="a", drafts=_turns(["mine", "also mine"]))

    assert _derived(mine) == ["8 May 2023\nalso mine", "8 May 2023\nmine"]


def test_memories_without_a_session_are_not_linked(tenant):
    facts = memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=[
            MemoryDraft(text="prefers dark mode"),
            MemoryDraft(text="lives in Lisbon", metadata={"date": "2024-02-29"}),
        ],
    )

    # Only a date the metadata carries; no other fact's words.
    assert _derived(facts) == ["", "29 February 2024"]
    assert {m.context_thread for m in Memory.objects.filter(tenant=tenant)} == {""}


def test_client_context_wins_and_the_memory_still_serves_as_a_neighbour(tenant):
    drafts = _turns(["before", "annotated", "after"])
    drafts[1] = MemoryDraft(text="annotated", context="client context", metadata=drafts[1].metadata)
    memories = memory_create_many(tenant=tenant, subject_id="a", drafts=drafts)

    stored = Memory.objects.get(pk=memories[1].pk)
    assert (stored.context, stored.derived_context) == ("client context", "")
    assert _derived(memories)[0] == "8 May 2023\nannotated\nafter"


def test_derived_context_is_bounded(tenant, settings):
    settings.MEMORY_DERIVED_CONTEXT_MAX_CHARS = 900
    long = "word " * 300
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_turns([long, long, "short", long, long])
    )

    middle = _derived(memories)[2]
    assert len(middle) == 900
    first_neighbour = _lines(middle)[1]
    assert len(first_neighbour) == settings.MEMORY_DERIVED_CONTEXT_NEIGHBOUR_MAX_CHARS


def test_promoted_memories_are_not_threaded(tenant):
    promoted = memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=_turns(["fact one", "fact two"], source=MemorySource.PROMOTED),
    )

    assert _derived(promoted) == ["", ""]
    assert {m.context_thread for m in Memory.objects.filter(tenant=tenant)} == {""}


def test_supersede_puts_the_new_version_in_the_old_ones_place(tenant):
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_turns(["t1", "old words", "t3"])
    )

    new = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=memories[1].pk,
        draft=_turns(["new words"])[0],
    )

    first, _old, third = _derived(memories)
    assert first == "8 May 2023\nnew words\nt3"
    assert third == "8 May 2023\nt1\nnew words"
    assert _derived([new]) == ["8 May 2023\nt1\nt3"]
    # The old version is history: it quotes nobody.
    assert Memory.objects.get(pk=memories[1].pk).derived_context == ""


def test_forget_removes_the_forgotten_words_from_every_neighbour(tenant):
    memories = memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=_turns(["we went", "to the secret aquarium", "yes last tuesday", "t4"]),
    )
    memory_embed_pending(memory_ids=[str(m.pk) for m in memories])

    def found():
        result = memory_recall(tenant=tenant, subject_id="a", query="aquarium", mode="keyword")
        return [hit.memory.text for hit in result.results]

    # The reply is found through its neighbour's words, below the turn that has them.
    first, *others = found()
    assert (first, sorted(others)) == (
        "to the secret aquarium",
        ["t4", "we went", "yes last tuesday"],
    )

    memory_forget(tenant=tenant, subject_id="a", memory_id=memories[1].pk)

    assert found() == []
    assert _derived([memories[0], memories[2], memories[3]]) == [
        "8 May 2023\nyes last tuesday\nt4",
        "8 May 2023\nwe went\nt4",
        "8 May 2023\nwe went\nyes last tuesday",
    ]


def test_operator_forget_re_derives_the_neighbours_too(tenant):
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_turns(["t1", "doomed", "t3"])
    )

    memory_forget_any(tenant=tenant, memory_id=memories[1].pk)

    assert _derived([memories[0], memories[2]]) == ["8 May 2023\nt3", "8 May 2023\nt1"]


def test_switched_off_nothing_is_derived(tenant, settings):
    settings.MEMORY_DERIVED_CONTEXT_ENABLED = False
    memories = memory_create_many(tenant=tenant, subject_id="a", drafts=_turns(["t1", "t2"]))

    assert _derived(memories) == ["", ""]
    assert {m.context_thread for m in Memory.objects.filter(tenant=tenant)} == {""}


def _bare_turns(texts, **extra):
    """Turns as a client writes them without a session key: text and nothing else."""
    return [MemoryDraft(text=text, **extra) for text in texts]


@pytest.mark.parametrize(
    ("text", "turn"),
    [
        ("Caroline: I went to the support group.", True),
        ("Mary Ann Smith: yes, last Tuesday!", True),
        ("user: remind me at 5", True),
        ("Assistant: done.", True),
        ("prefers dark mode", False),
        ("the plan: ship on Friday", False),
        ("Caroline:no space after the colon", False),
        ("One Two Three Four: too long a label", False),
        # A note's field is no speaker; a role that speaks is.
        ("Location: Berlin", False),
        ("Time zone: CET", False),
        ("Therapist: How are you feeling today?", True),
    ],
)
def test_a_turn_is_a_short_speaker_label_and_a_colon(text, turn):
    assert is_turn(text) is turn


def test_turns_without_a_session_key_written_in_one_batch_are_one_conversation(tenant):
    texts = ["A: t1", "B: t2", "A: t3", "B: t4"]
    memories = memory_create_many(tenant=tenant, subject_id="a", drafts=_bare_turns(texts))

    derived = [_lines(d) for d in _derived(memories)]
    assert derived[0] == ["B: t2", "A: t3"]
    assert derived[1] == ["A: t1", "A: t3", "B: t4"]
    threads = {m.context_thread for m in Memory.objects.filter(tenant=tenant)}
    assert len(threads) == 1
    assert threads.pop().startswith(IMPLICIT_THREAD_PREFIX)


def test_single_turns_continue_the_conversation_of_the_subjects_last_write(tenant):
    written = [
        memory_remember(tenant=tenant, subject_id="a", draft=draft)
        for draft in _bare_turns(["user: first", "assistant: second", "user: third"])
    ]

    derived = [_lines(d) for d in _derived(written)]
    assert derived[0] == ["assistant: second", "user: third"]
    assert derived[2] == ["user: first", "assistant: second"]


def test_a_pause_a_new_date_or_a_fact_in_between_starts_a_new_conversation(tenant, settings):
    settings.MEMORY_IMPLICIT_THREAD_GAP_SECONDS = 1800
    start = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    drafts = [
        MemoryDraft(text="A: morning", occurred_at=start),
        MemoryDraft(text="B: morning reply", occurred_at=start + timedelta(minutes=20)),
        # An hour's pause.
        MemoryDraft(text="A: evening", occurred_at=start + timedelta(hours=2)),
        MemoryDraft(text="B: evening reply", occurred_at=start + timedelta(hours=2)),
        # A fact between two turns ends the conversation.
        MemoryDraft(text="likes green tea", occurred_at=start + timedelta(hours=2)),
        MemoryDraft(
            text="A: after the fact",
            metadata={"date": "2025-03-01"},
            occurred_at=start + timedelta(hours=2),
        ),
        # The client's metadata says another day.
        MemoryDraft(
            text="B: next day",
            metadata={"date": "2025-03-02"},
            occurred_at=start + timedelta(hours=2),
        ),
    ]
    memories = memory_create_many(tenant=tenant, subject_id="a", drafts=drafts)

    rows = {m.pk: m for m in Memory.objects.filter(tenant=tenant)}
    threads = [rows[m.pk].context_thread for m in memories]
    assert threads[0] == threads[1]
    assert threads[2] == threads[3]
    assert threads[4] == ""
    assert len({threads[0], threads[2], threads[5], threads[6]}) == 4
    assert _derived(memories[:4]) == [
        "B: morning reply",
        "A: morning",
        "B: evening reply",
        "A: evening",
    ]


def test_inferred_conversations_stay_inside_their_subject_and_project(tenant, other_tenant):
    project = ProjectFactory.create(tenant=tenant)
    memory_create_many(tenant=tenant, subject_id="b", drafts=_bare_turns(["A: other subject"]))
    memory_create_many(tenant=other_tenant, subject_id="a", drafts=_bare_turns(["A: other tenant"]))
    memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=_bare_turns(["A: other project"], project_id=project.pk),
    )
    mine = memory_create_many(tenant=tenant, subject_id="a", drafts=_bare_turns(["A: mine"]))

    assert _derived(mine) == [""]


def test_supersede_keeps_a_turns_place_in_its_inferred_conversation(tenant):
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_bare_turns(["A: t1", "B: old", "A: t3"])
    )

    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=memories[1].pk, draft=MemoryDraft(text="B: new")
    )

    assert _derived([memories[0], new, memories[2]]) == [
        "B: new\nA: t3",
        "A: t1\nA: t3",
        "A: t1\nB: new",
    ]


def test_inferred_conversations_switched_off_turns_stay_unlinked(tenant, settings):
    settings.MEMORY_IMPLICIT_THREADS = False
    memories = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_bare_turns(["A: 1", "B: 2"])
    )

    assert _derived(memories) == ["", ""]
