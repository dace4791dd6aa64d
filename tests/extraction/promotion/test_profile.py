"""Profile facts the offline compiler keeps: who the speaker is and what changed, each a
statement that stands alone, dated when it became true."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.extraction.promotion.heuristic import extract_candidates
from apps.extraction.promotion.types import Turn

SAID = datetime(2024, 5, 8, 10, 0, tzinfo=UTC)


def _session(*user_lines: str) -> list[Turn]:
    turns = []
    for index, line in enumerate(user_lines):
        turns.append(Turn(role="user", content=line, seq=2 * index, occurred_at=SAID))
        turns.append(
            Turn(role="assistant", content="Thanks, noted.", seq=2 * index + 1, occurred_at=SAID)
        )
    return turns


def _kept(turns: list[Turn]) -> dict[str, datetime | None]:
    return {candidate.text: candidate.occurred_at for candidate in extract_candidates(turns)}


@pytest.mark.parametrize(
    ("_case", "line", "text", "when"),
    [
        (
            "moved",
            "I moved to Berlin last month.",
            "The user moved to Berlin in April 2024.",
            SAID,
        ),
        (
            "new_job",
            "Big news: I started a new job at Stripe as a backend engineer.",
            "The user started a new job at Stripe as a backend engineer.",
            SAID,
        ),
        (
            "married",
            "I got married yesterday!",
            "The user got married on 7 May 2024.",
            datetime(2024, 5, 7, tzinfo=UTC),
        ),
        ("pets", "I have two cats.", "The user has two cats.", SAID),
        (
            "tool",
            "I just switched from Poetry to uv for dependency management.",
            "The user just switched from Poetry to uv for dependency management.",
            SAID,
        ),
        (
            "recurring_commitment",
            "I started a pottery class on Tuesdays.",
            "The user started a pottery class on Tuesdays.",
            SAID,
        ),
        (
            "habit",
            "I go to the gym three times a week.",
            "The user goes to the gym three times a week.",
            SAID,
        ),
        ("allergy", "I'm allergic to peanuts.", "The user is allergic to peanuts.", SAID),
        (
            "preference",
            "I prefer short answers without bullet points.",
            "The user prefers short answers without bullet points.",
            SAID,
        ),
        (
            "an_aside_spliced_on",
            "I moved to Denver last month, the mountains are amazing.",
            "The user moved to Denver in April 2024.",
            SAID,
        ),
        (
            "a_remark_about_it",
            "I adopted a puppy, it's a golden retriever.",
            "The user adopted a puppy.",
            SAID,
        ),
        (
            "a_reason_is_kept",
            "I hurt my knee playing soccer, so no running for a while.",
            "The user hurt their knee playing soccer, so no running for a while.",
            SAID,
        ),
        (
            "stopped",
            "I quit smoking last month.",
            "The user quit smoking in April 2024.",
            SAID,
        ),
        (
            "a_label_and_what_follows",
            "Exciting update: I accepted an offer and I'm now an instructional designer at "
            "Brightpath Learning, so no more classroom teaching for me.",
            "The user is now an instructional designer at Brightpath Learning.",
            SAID,
        ),
        (
            "found_out",
            "I found out I'm lactose intolerant.",
            "The user is lactose intolerant.",
            SAID,
        ),
        (
            "a_household_we",
            "We relocated to Austin for the new job, the heat is something else.",
            "The user relocated to Austin for the new job.",
            SAID,
        ),
        (
            "a_name_told_after",
            "I've been seeing someone new, her name is Priya and it's going really well.",
            "The user has been seeing Priya.",
            SAID,
        ),
        (
            "a_couple_parts",
            "Sam and I decided to go our separate ways, so it's just me and Miso now.",
            "Sam and the user decided to go their separate ways.",
            SAID,
        ),
        ("a_death", "Sad news, Miso passed away on Tuesday.", "Miso passed away on Tuesday.", SAID),
        ("an_engaged_we", "Sam said yes!! We're engaged!", "The user is engaged.", SAID),
        (
            "the_users_state_after_another_clause",
            "Cast came off today and my wrist is totally fine now, back to normal.",
            "The user's wrist is totally fine now, back to normal.",
            SAID,
        ),
        (
            "a_pet_adopted_with_someone",
            "Sam and I adopted a cat from the shelter, she's a grumpy tabby called Miso.",
            "Sam and the user adopted a cat from the shelter.",
            SAID,
        ),
        (
            "hired",
            "Big news, I got hired as a junior developer at Fernhill Labs!",
            "The user got hired as a junior developer at Fernhill Labs.",
            SAID,
        ),
        (
            "notice_handed_in",
            "I handed in my notice last week.",
            "The user handed in their notice the week before 8 May 2024.",
            SAID,
        ),
        (
            "a_diet_named_alone",
            "I'm doing keto right now.",
            "The user is doing keto right now.",
            SAID,
        ),
        (
            "told_without_its_subject",
            "Started volunteering at the food bank on Thursday evenings.",
            "The user started volunteering at the food bank on Thursday evenings.",
            SAID,
        ),
        (
            "a_place_is_home",
            "We've moved! Portland is home now.",
            "The user lives in Portland now.",
            SAID,
        ),
        (
            "a_title_told_with_an_adverb",
            "So I'm officially an attorney now, still at Hart & Cole.",
            "The user is officially an attorney now, still at Hart & Cole.",
            SAID,
        ),
        (
            "had_to_stop",
            "I had to stop volunteering at the food bank, the new job doesn't leave me time.",
            "The user had to stop volunteering at the food bank.",
            SAID,
        ),
        (
            "a_death_and_what_follows",
            "Biscuit died yesterday, he was fourteen.",
            "Biscuit died on 7 May 2024.",
            datetime(2024, 5, 7, tzinfo=UTC),
        ),
        (
            "heads_up",
            "Heads up that I have celiac disease.",
            "The user has celiac disease.",
            SAID,
        ),
        (
            "a_couple_told_as_done",
            "Marco and I have separated.",
            "Marco and the user have separated.",
            SAID,
        ),
    ],
)
def test_a_users_profile_statement_is_kept_standing_alone(_case, line, text, when):
    kept = _kept(_session(line))

    assert kept[text] == when


@pytest.mark.parametrize(
    ("_case", "line"),
    [
        ("hedged", "I think I might move to Porto next year."),
        ("someone_else", "She moved to Paris."),
        ("dangling", "I moved there last month."),
        ("question", "Did I tell you I moved to Berlin?"),
        ("secret", "My password is hunter22hunter22 and I moved to Berlin."),
        ("one_outing", "I went for a run in the park this morning."),
        ("a_thing_liked", "I love it."),
        ("a_teams_move", "We moved the standup to Thursdays."),
    ],
)
def test_a_statement_that_is_not_a_standalone_profile_fact_is_not_kept(_case, line):
    assert _kept(_session(line)) == {}


def test_a_liking_said_after_another_clause_is_kept_only_with_its_sentence():
    kept = _kept(_session("Made it to Denver, the apartment is tiny but I love the neighborhood."))

    assert list(kept) == [
        "Made it to Denver, the apartment is tiny but the user loves the neighborhood."
    ]


def test_a_long_label_before_two_facts_leaves_the_two_facts_alone():
    kept = _kept(
        _session(
            "Hi! A bit about me so you have context: I teach chemistry in Portland, and I share "
            "a house with my partner Sam and our cat Miso."
        )
    )

    assert list(kept) == [
        "The user teaches chemistry in Portland.",
        "The user shares a house with their partner Sam and their cat Miso.",
    ]


def test_clauses_joined_by_commas_are_split_only_where_each_says_something_of_the_user():
    kept = _kept(
        _session(
            "i work as a paralegal at Hart & Cole, i'm married to Jordan, and we have a golden "
            "retriever named Biscuit."
        )
    )
    whole = _kept(_session("I'm Tomasz, I'm on the platform team."))

    assert list(kept) == [
        "The user works as a paralegal at Hart & Cole.",
        "The user is married to Jordan.",
        "The user has a golden retriever named Biscuit.",
    ]
    assert "The user is on the platform team." not in whole


def test_a_sentence_that_says_two_things_about_the_user_is_kept_as_two_facts():
    kept = _kept(
        _session("Quick intro: I'm a nurse at St. Luke's hospital and I live in Boston with Tom.")
    )

    # Only those two: the whole sentence is not kept beside them, so a later move retires
    # the home alone and the job stays.
    assert list(kept) == [
        "The user is a nurse at St. Luke's hospital.",
        "The user lives in Boston with Tom.",
    ]


def test_a_job_change_told_in_passing_is_kept():
    kept = _kept(
        _session("Big news: I left the hospital and now work as a data analyst at Globex.")
    )

    assert any("data analyst at Globex" in text for text in kept)


def test_a_profile_fact_the_sentence_rules_kept_is_not_repeated():
    kept = _kept(_session("I work at Acme as a data analyst."))

    assert list(kept) == ["The user works at Acme as a data analyst."]


def test_in_a_conversation_an_answer_without_a_subject_becomes_the_speakers_fact():
    turns = [
        Turn(role="user", content="Audrey: Do you have pets?", seq=1, occurred_at=SAID),
        Turn(role="assistant", content="Andrew: No, no pets right now.", seq=2, occurred_at=SAID),
    ]

    kept = _kept(turns)

    assert kept["Andrew has no pets. (said on 8 May 2024)"] == SAID
