"""Which questions ask how things stand now (the later of two memories of one fact answers
them), and which ask about an event (the ranking's order stands)."""

from __future__ import annotations

import pytest

from apps.extraction.state_questions import (
    asked_attributes,
    asks_current_state,
    asks_in_present,
    asks_what_used_to_be,
    names_in,
)


@pytest.mark.parametrize(
    "question",
    [
        "Is Melanie doing pottery these days?",
        "What book is Jon currently reading?",
        "Does John still have his job?",
        "Where does the user work now?",
        "What became of Joanna's first screenplay?",
        "How far along is Caroline with adopting a child?",
        "What's the status of the migration?",
        "Did Gina get the design internship?",
        "How many dogs does Maria have?",
        "Is the user married?",
        "Where does the user live?",
        "What diet does the user follow?",
        "Has the new album come out?",
        "Which database does the billing service use?",
        "What car does the user drive?",
        "What is Carol's email address?",
        "Who is the user's manager?",
        "Who is the project manager?",
        "When is the product launch?",
        "Is the user training for a marathon?",
        "Is Maria still working at the hospital?",
        "What does the user do for work?",
        "Which city does the user live in?",
        "Is the user in a relationship?",
        "Who is Ana dating?",
        "What does the user eat?",
        "Does the user have a pet?",
    ],
)
def test_questions_about_how_things_stand(question):
    assert asks_current_state(question)


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie go camping?",
        "What did Caroline paint last week?",
        "Where did James go on vacation?",
        "Did Melanie go camping in June?",
        "What does Melanie do to destress?",
        "How many times has John been to Paris?",
        "Where did the user live before the move?",
        "Which database did the team choose?",
        "Is it snowing?",
        "Is the user going to Paris next week?",
        "What is Melanie's hand-painted bowl a reminder of?",
        "What did the user eat for dinner?",
        "Did the user have a pet as a child?",
        "What is Caroline's reason for getting into running?",
        "Who is Caroline?",
        "When is Caroline's youth center putting on a talent show?",
        "What car did the user drive in college?",
        "When is the deploy pipeline on friday?",
    ],
)
def test_questions_about_an_event_or_a_habit(question):
    assert not asks_current_state(question)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Where does Alice work?", ("Alice",)),
        ("What became of Joanna's first screenplay?", ("Joanna",)),
        ("Are James and Samantha together?", ("James", "Samantha")),
        ("Where does the user live?", ()),
        ("Melanie: is she still doing pottery?", ()),
    ],
)
def test_the_names_a_question_asks_about(question, names):
    assert names_in(question) == names


@pytest.mark.parametrize(
    ("question", "families"),
    [
        ("What is the user's current occupation?", {"employer", "role"}),
        ("Where does Maria work now?", {"employer", "role"}),
        ("Where does the user live?", {"residence"}),
        ("What is the user's current location?", {"residence"}),
        ("What diet does the user follow?", {"diet"}),
        ("What is Caroline's relationship status?", {"relationship"}),
        ("Is Evan married?", {"relationship"}),
        ("How many dogs does Andrew have?", {"pets"}),
        ("Who does the user live with?", {"household"}),
        ("Is the user allergic to peanuts?", {"condition"}),
        ("What does the user do for work?", {"employer", "role"}),
        ("Which city does the user live in?", {"residence"}),
        ("Is the user in a relationship?", {"relationship"}),
        ("What does the user eat?", {"diet"}),
        ("Does the user have a pet?", {"pets"}),
        # Not a question about how things stand: no attribute is asked for.
        ("When did the user start the job at Globex?", set()),
        ("What did Caroline paint last week?", set()),
    ],
)
def test_the_attribute_a_question_asks_for(question, families):
    assert asked_attributes(question) == families


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("Does Sam drink coffee?", True),
        ("Where is the office?", True),
        ("What framework is the frontend built with?", True),
        ("Which editor do I use?", True),
        ("What does Melanie do to destress?", True),
        ("When did Melanie go camping?", False),
        ("What did Caroline paint last week?", False),
        ("Would Caroline pursue writing as a career?", False),
        ("How many times has John been to Paris?", False),
        ("Is it snowing?", False),
        ("Is there a meeting today?", False),
    ],
)
def test_questions_in_the_present(question, present):
    assert asks_in_present(question) is present


@pytest.mark.parametrize(
    ("question", "used_to"),
    [
        ("Where did Maria use to work?", True),
        ("What was the user's previous phone number?", True),
        ("What was my old address?", True),
        ("Where did he live before?", True),
        ("What did the team use originally?", True),
        ("How old is the user?", False),
        ("Where did Maria work before the move?", False),
        ("Does Maria no longer work at the hospital?", False),
        ("Where does Maria work?", False),
        ("What ingredient did Nate use to make the ice cream?", False),
    ],
)
def test_questions_about_what_used_to_be(question, used_to):
    assert asks_what_used_to_be(question) is used_to
