"""Names a statement mentions alone, said with whose pet or relation they are."""

from __future__ import annotations

import pytest

from apps.extraction.referents import (
    NamedReferent,
    introduce_referents,
    named_referents,
    plain_names,
)

EARLIER = [
    "The user has a golden retriever named Biscuit.",
    "Andrew adopted a puppy called Toby.",
    "The user's friend Sam moved to Denver.",
]


def test_a_name_may_be_introduced_before_its_owner_and_kind():
    introduced = ["Meet Toby, Andrew's puppy loves walks.", "Pip, the user's kitten, is shy."]

    assert named_referents(introduced) == {
        "Toby": NamedReferent(name="Toby", kind="puppy", owner="Andrew"),
        "Pip": NamedReferent(name="Pip", kind="kitten", owner="the user"),
    }


def test_pets_and_relations_are_introduced_with_their_owner():
    assert named_referents(EARLIER) == {
        "Biscuit": NamedReferent(name="Biscuit", kind="golden retriever", owner="the user"),
        "Toby": NamedReferent(name="Toby", kind="puppy", owner="Andrew"),
        "Sam": NamedReferent(name="Sam", kind="friend", owner="the user"),
    }


@pytest.mark.parametrize(
    ("_case", "texts", "name"),
    [
        ("a kind that is nobody's", ["Caroline met a woman named Sarah."], "Sarah"),
        (
            "one name, two things",
            ["The user has a cat named Max.", "The user's brother Max lives in Oslo."],
            "Max",
        ),
        ("a name that is also a date's", ["The user has a cat named May."], "May"),
        # A conversation's speakers own things: written into all they say, they would drown it.
        (
            "a name that owns a referent",
            ["Caroline's friend Melanie is a painter.", "Melanie has a dog named Rex."],
            "Melanie",
        ),
    ],
)
def test_what_introduces_no_one(_case, texts, name):
    assert name not in named_referents(texts)


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Biscuit died last week.", "The user's golden retriever Biscuit died last week."),
        # The owner named before: a pronoun, not the name again.
        ("Andrew took Toby to the beach.", "Andrew took their puppy Toby to the beach."),
        (
            "The user walked Biscuit and Sam came along.",
            "The user walked their golden retriever Biscuit and their friend Sam came along.",
        ),
        # Already introduced, or naming no one known: as said.
        ("The user has a golden retriever named Biscuit.", None),
        ("The user's friend Sam is vegan now.", None),
        ("Sarah gave a talk.", None),
        ("Samantha called.", None),
    ],
)
def test_a_known_name_is_said_with_its_owner_and_kind(said, kept):
    assert introduce_referents(said, named_referents(EARLIER)) == (kept or said)


def test_the_change_rules_read_an_introduced_name_as_the_name():
    assert plain_names("The user's golden retriever Biscuit died last week.") == (
        "Biscuit died last week."
    )
    assert plain_names("Andrew took their puppy Toby to the beach.") == (
        "Andrew took Toby to the beach."
    )
    # Not a pet's or a relation's: left as written.
    assert plain_names("The user's favourite band Muse is touring.") == (
        "The user's favourite band Muse is touring."
    )
