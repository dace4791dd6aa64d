"""The change rules: which statements make a claim about an attribute, which make none, and
which two claims state different values."""

from __future__ import annotations

import pytest

from apps.extraction.changes import Claim, conflict, extract_claims, states_attribute
from apps.extraction.changes.claims import phrase_claims


def _claims(text: str) -> list[tuple[str, str, str]]:
    return [(claim.entity, claim.attribute, claim.value) for claim in extract_claims(text)]


@pytest.mark.parametrize(
    ("_case", "text", "expected"),
    [
        ("works_at", "The user works at Stripe.", [("user", "employer", "stripe")]),
        # Two subjects, one change: neither is split off the other.
        (
            "a_couple_told_as_done",
            "Marco and I have separated.",
            [("marco", "relationship", "single"), ("i", "relationship", "single")],
        ),
        (
            "a_couple_parts_ways",
            "Sam and the user decided to go their separate ways.",
            [
                ("sam", "relationship", "single"),
                ("sam", "decision", "yes"),
                ("user", "relationship", "single"),
                ("user", "decision", "yes"),
            ],
        ),
        ("pets_adopted_by_count", "I adopted two kittens.", [("i", "pets:cat", "some")]),
        ("a_dog_told_by_its_breed", "Tom has two labradors.", [("tom", "pets:dog", "2")]),
        (
            "an_occupation_with_an_adverb",
            "Ana is officially an attorney now, still at Hart & Cole.",
            [("ana", "role", "attorney"), ("ana", "employer", "hart & cole")],
        ),
        ("had_to_stop", "Ana had to stop volunteering.", [("ana", "activity", "stopped")]),
        ("meat_given_up", "The user has cut out meat.", [("user", "diet", "vegetarian")]),
        # A comma before a clause with a subject of its own ends the first clause.
        (
            "a_comma_before_a_subject",
            "The user has cut out meat completely, the user is vegetarian now.",
            [("user", "diet", "vegetarian"), ("user", "diet", "vegetarian")],
        ),
        ("a_habit_abstained_from", "I don't drink coffee.", [("i", "activity", "stopped")]),
        ("kindergarten", "The user's son Leo is in kindergarten.", [("leo", "key:grade", "0")]),
        (
            "hired",
            "I got hired as a junior developer at Fernhill Labs.",
            [("i", "role", "junior developer"), ("i", "employer", "fernhill labs")],
        ),
        (
            "hired_by",
            "Maria was hired by Stripe.",
            [("maria", "employer", "stripe")],
        ),
        (
            "notice_handed_in",
            "I handed in my notice.",
            [("i", "employer", "none"), ("i", "role", "none")],
        ),
        ("engaged_we", "We're engaged!", [("i", "relationship", "engaged")]),
        (
            "adopted_with_someone",
            "Sam and I adopted a cat.",
            [("sam", "pets:cat", "some"), ("i", "pets:cat", "some")],
        ),
        ("a_part_well_again", "My wrist is totally fine now.", [("i", "health:*", "recovered")]),
        ("a_diet_named_alone", "I'm doing keto right now.", [("i", "diet", "keto")]),
        ("a_diet_quit", "I quit keto.", [("i", "diet", "not keto")]),
        (
            "commute_by_light_rail",
            "I take the light rail to work.",
            [("i", "commute", "light rail")],
        ),
        ("an_age_alone", "The user is 34.", [("user", "key:age", "34")]),
        ("put_down", "We had to put Max down last week.", [("max", "alive", "dead")]),
        (
            "a_household_child",
            "We just had our third baby!",
            [("team", "key:children", "3"), ("i", "key:children", "3")],
        ),
        # A name with a dot in it is one name, not a value of a kind "io".
        ("a_dotted_name", "The team switched to Fly.io.", [("team", "tool:*", "fly.io")]),
        (
            "a_request_to_switch",
            "The user asked to switch responses back to English.",
            [("user", "choice", "english")],
        ),
        (
            "a_key_migrated",
            "We migrated the deploy target to Fly.io.",
            [("team", "key:deploy target", "fly.io")],
        ),
        (
            "a_dose_changed_by_the_doctor",
            "The user's doctor raised the sertraline dose to 100 mg.",
            [("user", "key:sertraline dose", "100 mg")],
        ),
        (
            "an_allergy_gone",
            "The user's cat allergy went away after the treatment.",
            [("user", "condition", "none")],
        ),
        (
            "a_switch_where_it_is_done",
            "The user switched to day shifts at the hospital.",
            [("user", "switched:shift", "day")],
        ),
        (
            "an_intolerance",
            "The user is lactose intolerant.",
            [("user", "condition", "has")],
        ),
        (
            "seeing_someone_named",
            "The user has been seeing Priya.",
            [("user", "relationship", "dating")],
        ),
        (
            "works_as_at",
            "Priya works as a nurse at St Mary's.",
            [("priya", "role", "nurse"), ("priya", "employer", "st mary's")],
        ),
        (
            "new_job",
            "Andrew started a new job as a Financial Analyst last week.",
            [("andrew", "role", "financial analyst"), ("andrew", "employer", "employed")],
        ),
        (
            "lost_job",
            "John lost his job at a mechanical engineering company.",
            [("john", "employer", "none"), ("john", "role", "none")],
        ),
        (
            "abbreviated_employer",
            "Maria works as a nurse at St. Luke's hospital.",
            [("maria", "role", "nurse"), ("maria", "employer", "st. luke's hospital")],
        ),
        (
            "second_predicate_of_the_same_subject",
            "Maria left the hospital and now works as a data analyst at Globex.",
            [("maria", "role", "data analyst"), ("maria", "employer", "globex")],
        ),
        (
            "a_role_and_another_noun_stay_one_predicate",
            "Priya works as a nurse and midwife at Acme.",
            [("priya", "role", "nurse"), ("priya", "employer", "acme")],
        ),
        ("first_person_present", "I live in Boston.", [("i", "residence", "boston")]),
        ("first_person_contraction", "I'm vegetarian.", [("i", "diet", "vegetarian")]),
        (
            "first_person_plural",
            "We use Postgres for the main database.",
            [("team", "tool:database main", "postgres")],
        ),
        ("my_key", "My favorite color is blue.", [("i", "key:favorite color", "blue")]),
        (
            "a_new_value_of_a_key",
            "The user's new manager is Omar.",
            [("user", "key:manager", "omar")],
        ),
        ("dating_a_name", "Alice is dating Tom.", [("alice", "relationship", "dating")]),
        ("is_an_occupation", "John is now a principal.", [("john", "role", "principal")]),
        (
            "an_occupation_somewhere",
            "Priya is a student at MIT.",
            [("priya", "role", "student"), ("priya", "employer", "mit")],
        ),
        ("left_a_named_employer", "Maria quit Acme.", [("maria", "employer", "none")]),
        ("a_tool_without_a_purpose", "The team uses Jira.", [("team", "tool:*", "jira")]),
        ("promoted", "Jo was promoted to team lead.", [("jo", "role", "team lead")]),
        ("lives_in", "The user lives in Lisbon.", [("user", "residence", "lisbon")]),
        ("moved_to", "Sam moved to New York in 2021.", [("sam", "residence", "new york")]),
        ("vegan", "The user is vegan now.", [("user", "diet", "vegan")]),
        ("not_vegetarian", "Mia is no longer vegetarian.", [("mia", "diet", "not vegetarian")]),
        ("eats_meat", "The user eats meat again.", [("user", "diet", "omnivore")]),
        ("married", "Evan got married last week.", [("evan", "relationship", "married")]),
        ("no_pets", "Andrew does not currently have any pets.", [("andrew", "pets:pet", "0")]),
        ("answer_no_pets", "Andrew: No, no pets right now.", [("andrew", "pets:pet", "0")]),
        ("count", "Nate has two turtles.", [("nate", "pets:turtle", "2")]),
        (
            "named_list",
            "Audrey has had her dogs named Pepper, Precious, and Panda for 3 years.",
            [("audrey", "pets:dog", "3")],
        ),
        ("owned_count", "Audrey is taking care of her four dogs.", [("audrey", "pets:dog", "4")]),
        ("another", "Andrew adopted another pup from a shelter.", [("andrew", "pets:dog", "+")]),
        ("ordinal", "Nate has a third turtle as a pet.", [("nate", "pets:turtle", "3")]),
        ("possessive_pet", "Meet Toby, Andrew's puppy.", [("andrew", "pets:dog", "some")]),
        ("injured", "John hurt his ankle at practice.", [("john", "health:ankle", "injured")]),
        (
            "recovered",
            "John was able to jog without pain again.",
            [("john", "health:*", "recovered")],
        ),
        ("favourite", "Tim's favorite book is Dune.", [("tim", "key:favorite book", "dune")]),
        (
            "switched",
            "The user switched from Poetry to uv for dependency management.",
            [("user", "tool:dependency management", "uv")],
        ),
        (
            "switched_what_then_from",
            "The team migrated the billing service from PostgreSQL to MySQL.",
            [("team", "tool:bill service", "mysql"), ("billing service", "tool:platform", "mysql")],
        ),
        (
            "a_dotted_value",
            "Carol's email is carol@old.example.com.",
            [("carol", "key:email", "carol@old.example.com")],
        ),
        (
            "a_key_changed",
            "Carol changed her email to carol@new.example.com.",
            [("carol", "key:email", "carol@new.example.com")],
        ),
        (
            "my_key_updated",
            "I updated my phone number to 555-0199.",
            [("i", "key:phone number", "555-0199")],
        ),
        (
            "interviewed",
            "Gina had an interview for a design internship.",
            [("gina", "result", "interviewed")],
        ),
        (
            "a_habit_told_with_how_often",
            "The user goes to the gym three times a week.",
            [("user", "activity", "active")],
        ),
        (
            "a_commitment_on_a_weekday",
            "The user volunteers at the animal shelter every Saturday morning.",
            [("user", "activity", "active")],
        ),
        ("stopped_going", "The user stopped going to the gym.", [("user", "activity", "stopped")]),
        (
            "a_preference",
            "The user prefers short answers.",
            [("user", "preference", "likes"), ("user", "choice", "short answers")],
        ),
        ("a_dislike", "Mia can't stand cilantro.", [("mia", "preference", "dislikes")]),
        ("an_allergy", "The user is allergic to peanuts.", [("user", "condition", "has")]),
        (
            "an_allergy_ended",
            "The user is no longer allergic to peanuts.",
            [("user", "condition", "none")],
        ),
        ("an_age", "The user is 30 years old.", [("user", "key:age", "30")]),
        (
            "lives_with",
            "The user lives with two roommates.",
            [("user", "household", "two roommates")],
        ),
        ("lives_alone", "The user now lives alone.", [("user", "household", "alone")]),
        ("a_birthday", "Sam just turned 31.", [("sam", "key:age", "31")]),
        ("fish_again", "The user started eating fish again.", [("user", "diet", "not vegetarian")]),
        ("left_a_group", "Jo left the book club.", [("jo", "activity", "stopped")]),
        (
            "a_key_for_something",
            "The user's budget for the trip is $2000.",
            [("user", "key:budget for the trip", "$2000")],
        ),
        ("a_diagnosis", "Tom was diagnosed with asthma.", [("tom", "condition", "has")]),
        (
            "a_titled_value",
            "The user's landlord is Mr. Green.",
            [("user", "key:landlord", "mr. green")],
        ),
        ("a_thousands_comma", "The user's rent is $1,900.", [("user", "key:rent", "$1,900")]),
        (
            "a_key_raised",
            "The user raised the hourly rate to $95.",
            [("user", "key:hourly rate", "$95")],
        ),
        (
            "a_key_raised_passive",
            "The user's rent was raised to $2,100.",
            [("user", "key:rent", "$2,100")],
        ),
        (
            "a_new_holder",
            "The user has a new landlord, Ms. Ortiz.",
            [("user", "key:landlord", "ms. ortiz")],
        ),
        (
            "switched_plural_key",
            "The user switched dentists to Dr. Patel.",
            [("user", "key:dentist", "dr. patel")],
        ),
        # Someone of the family, or a pet, is an entity of their own; a named one is the name.
        (
            "a_relative",
            "The user's daughter goes to Lincoln Elementary.",
            [("user's daughter", "school", "lincoln elementary")],
        ),
        ("a_named_relative", "My sister Anna lives in Rome.", [("anna", "residence", "rome")]),
        ("who_a_name_is", "Luna, my cat, passed away last month.", [("luna", "alive", "dead")]),
        (
            "a_couple_with_the_user",
            "The user and Priya got married in June.",
            [("user", "relationship", "married"), ("priya", "relationship", "married")],
        ),
        (
            "some_days_in_the_office",
            "The user works from the office three days a week.",
            [("user", "workplace", "hybrid")],
        ),
        ("fully_remote", "I now work fully remote.", [("i", "workplace", "remote")]),
        ("a_commute", "I bike to work.", [("i", "commute", "bike")]),
        # A key said without an owner, read only where it holds one value.
        (
            "an_event_without_its_owner",
            "Sprint planning moved to Wednesdays.",
            [("*", "key:sprint planning", "wednesdays")],
        ),
        (
            "a_limit_without_its_owner",
            "The API rate limit is 100 requests per minute.",
            [("*", "key:api rate limit", "100 requests per minute")],
        ),
        (
            "a_format_wanted",
            "The user wants replies in Spanish.",
            [("user", "choice", "spanish")],
        ),
        ("a_doer", "The user is a smoker.", [("user", "activity", "active")]),
        (
            "an_address_with_its_city",
            "The user's address is 12 Oak Street, Portland.",
            [("user", "key:address", "12 oak street")],
        ),
        (
            "a_model_with_its_number",
            "The user's phone is a Pixel 6.",
            [("user", "key:phone", "pixel 6")],
        ),
    ],
)
def test_a_statement_of_an_attribute_makes_a_claim(_case, text, expected):
    assert _claims(text) == expected


@pytest.mark.parametrize(
    ("_case", "text"),
    [
        ("hedged", "John may have found a job at a tech company."),
        ("planned", "The user plans to move to Berlin next year."),
        ("wished", "Joanna would get two turtles if she could."),
        ("question", "Does the user still live in Lisbon?"),
        ("reported", "Maria said that John lost his job."),
        ("childhood", "Maria did not have any pets growing up."),
        ("pronoun_subject", "She moved to Paris."),
        ("two_subjects", "Audrey and Andrew adopted another puppy."),
        ("no_place", "The user moved into a new apartment."),
        ("a_short_break", "Andrew took a break from work to check out a new cafe."),
        ("a_judgement", "John's team is like a second family."),
        ("an_event", "Caroline went to a support group yesterday."),
        ("a_role_beside_the_job", "I am also a volunteer firefighter."),
        ("a_place_of_an_employer", "I left Acme's office early today."),
        ("an_employer_left_for_the_day", "I left Acme early today."),
        ("a_judgement_of_a_role", "John is a great friend."),
        ("a_new_friend", "Caroline has a new friend, Mel."),
        ("a_haircut", "Melanie cut her hair to shoulder length."),
    ],
)
def test_a_statement_that_is_not_a_current_value_makes_no_claim(_case, text):
    assert extract_claims(text) == []


def test_the_month_may_is_not_a_hedge():
    assert _claims("The user moved to Berlin on 7 May 2024.") == [("user", "residence", "berlin")]


def _one(text: str) -> Claim:
    """The claim a statement makes (a job's role left out where the statement names its
    employer, and its start; a thing's platform where a team's switch names the thing)."""
    claims = [claim for claim in extract_claims(text) if claim.value != "employed"]
    if len(claims) > 1:
        claims = [c for c in claims if c.family != "role" and c.attribute != "tool:platform"]
    (claim,) = claims
    return claim


@pytest.mark.parametrize(
    ("_case", "old", "new", "expected"),
    [
        ("new_employer", "The user works at Stripe.", "The user works at Google.", True),
        (
            "same_employer",
            "The user works at Stripe.",
            "The user works at Stripe in Dublin.",
            False,
        ),
        ("job_lost", "The user works at Stripe.", "The user lost their job at Stripe.", True),
        ("new_city", "The user lives in Berlin.", "The user moved to Lisbon.", True),
        ("same_city", "The user lives in Lisbon.", "The user moved to Lisbon.", False),
        ("diet_change", "The user is vegetarian.", "The user is vegan now.", True),
        ("diet_beside", "The user is vegan.", "The user is on a gluten-free diet.", False),
        ("pets_from_none", "Andrew has no pets.", "Andrew adopted a puppy.", True),
        ("pets_count", "Nate has two turtles.", "Nate has a third turtle as a pet.", True),
        ("pets_one_more", "Nate has two turtles.", "Nate adopted another turtle.", True),
        ("pets_unknown_count", "Nate has a turtle.", "Nate adopted another turtle.", False),
        (
            "pets_same_count",
            "Audrey has four dogs.",
            "Audrey is taking care of her four dogs.",
            False,
        ),
        ("other_species", "Nate has two turtles.", "Nate has three dogs.", None),
        ("healed", "John hurt his ankle.", "John has fully recovered.", True),
        ("other_person", "John hurt his ankle.", "Tim has fully recovered.", None),
        (
            "application",
            "Gina had an interview for a design internship.",
            "Gina got accepted for a fashion internship.",
            True,
        ),
        (
            "activity_stopped",
            "Melanie signed up for a pottery class.",
            "Melanie took a break from pottery.",
            True,
        ),
        (
            "activity_elsewhere",
            "Melanie signed up for a pottery class.",
            "Melanie took a break from running.",
            None,
        ),
        (
            "habit_stopped",
            "The user goes to the gym three times a week.",
            "The user stopped going to the gym.",
            True,
        ),
        (
            "commitment_stopped",
            "The user volunteers at the animal shelter every Saturday morning.",
            "The user stopped volunteering at the shelter.",
            True,
        ),
        (
            "another_habit",
            "The user goes to the gym three times a week.",
            "The user has therapy every Monday.",
            None,
        ),
        ("taste_turned", "Mia loves cilantro.", "Mia no longer likes cilantro.", True),
        ("another_taste", "The user likes tea.", "The user also likes coffee.", None),
        ("same_taste", "The user likes tea.", "The user really enjoys tea.", False),
        (
            "allergy_outgrown",
            "Mia is allergic to peanuts.",
            "Mia is no longer allergic to peanuts.",
            True,
        ),
        ("birthday", "The user is 30 years old.", "The user just turned 31.", True),
        ("now_alone", "The user lives with two roommates.", "The user now lives alone.", True),
        (
            "same_household",
            "The user lives with Tom.",
            "The user lives with Tom in a flat by the river.",
            False,
        ),
        (
            "vegetarian_eats_fish",
            "The user is vegetarian.",
            "The user started eating fish again.",
            True,
        ),
        (
            "omnivore_eats_fish",
            "The user eats meat again.",
            "The user eats fish on Fridays.",
            False,
        ),
        ("left_the_band", "Jo plays guitar in a band.", "Jo left the band.", True),
        (
            "another_condition",
            "The user is allergic to peanuts.",
            "The user was diagnosed with asthma.",
            None,
        ),
        (
            "tool_named",
            "The user uses Poetry for dependency management.",
            "The user switched from Poetry to uv for dependency management.",
            True,
        ),
        ("left_the_employer", "Maria works at Acme.", "Maria quit Acme.", True),
        ("left_another_place", "Maria works at Acme.", "Maria left Paris for a conference.", None),
        ("new_occupation", "John is a teacher.", "John is now a principal.", True),
        (
            "tool_migrated",
            "The team uses PostgreSQL for the billing service.",
            "The team migrated the billing service from PostgreSQL to MySQL.",
            True,
        ),
        (
            "address_changed",
            "Carol's email is carol@old.example.com.",
            "Carol changed her email to carol@new.example.com.",
            True,
        ),
        (
            "address_with_more_words",
            "Carol's email is carol@example.com.",
            "Carol's email is carol@example.com for work.",
            False,
        ),
        (
            "decision_reversed",
            "The team decided to use Kafka for events.",
            "The team decided not to use Kafka for events.",
            True,
        ),
    ],
)
def test_two_claims_conflict_only_on_the_same_attribute_with_another_value(
    _case, old, new, expected
):
    assert conflict(_one(old), _one(new)) is expected


@pytest.mark.parametrize(
    ("_case", "old", "new", "expected"),
    [
        # A home named before its place.
        (
            "a_home_in_a_place",
            "The user lives in a studio apartment in Brooklyn.",
            "The user just moved into a house in Queens.",
            True,
        ),
        (
            "the_same_place",
            "The user lives in a studio apartment in Brooklyn.",
            "The user moved into a bigger flat in Brooklyn.",
            False,
        ),
        # A time phrase or another clause before the key.
        (
            "these_days",
            "The user's favourite band is Radiohead.",
            "These days the user's favourite band is Arctic Monkeys.",
            True,
        ),
        (
            "after_another_clause",
            "The user's manager is Kevin.",
            "Kevin left the company; the user's new manager is Aisha.",
            True,
        ),
        # A key's value told as changed, without an auxiliary.
        (
            "changed_to",
            "My phone number is 555-0101.",
            "My phone number changed to 555-0199.",
            True,
        ),
        ("increased_to", "Our rent is $1,900.", "Our rent increased to $2,100.", True),
        # What a project's thing is built on.
        (
            "platform_migrated",
            "The database runs on MySQL 5.7.",
            "The database was migrated to PostgreSQL 15.",
            True,
        ),
        (
            "platform_rewritten",
            "Our API is written in Flask.",
            "We rewrote the API in FastAPI.",
            True,
        ),
        (
            "platform_upgraded",
            "The backend runs on Python 3.11.",
            "The backend was upgraded to Python 3.12.",
            True,
        ),
        (
            "the_same_platform",
            "The database runs on MySQL 5.7.",
            "The database runs on MySQL 5.7 in production.",
            False,
        ),
        # One choice for a setting, then another.
        (
            "another_choice",
            "The user prefers light mode in the editor.",
            "The user now prefers dark mode in the editor.",
            True,
        ),
        (
            "a_choice_of_the_same_kind",
            "The user prefers window seats on flights.",
            "The user prefers aisle seats on flights.",
            True,
        ),
        ("choices_of_two_kinds", "The user prefers tea.", "The user now prefers coffee.", False),
        (
            "choices_for_two_settings",
            "The user prefers window seats on flights.",
            "The user prefers dark mode in the editor.",
            False,
        ),
        # Moving out of someone's home ends living with them, not with anyone else.
        (
            "moved_out",
            "Nina lives with her parents.",
            "Nina moved out of her parents' place into her own flat.",
            True,
        ),
        (
            "moved_out_of_another_home",
            "Nina lives with two roommates.",
            "Nina moved out of her parents' place.",
            False,
        ),
        # A switch from a value ends an activity that held it.
        (
            "switched_from_what_was_learnt",
            "The user is learning Spanish.",
            "The user switched from Spanish to Japanese lessons.",
            True,
        ),
        (
            "switched_something_else",
            "The user is learning Spanish.",
            "The user switched from Duolingo to Babbel.",
            False,
        ),
        (
            "replaced_with",
            "The user's laptop is a MacBook Air.",
            "The user replaced the MacBook Air with a ThinkPad.",
            True,
        ),
        (
            "a_part_replaced",
            "The user's laptop is a MacBook Air.",
            "The user replaced the laptop's battery.",
            False,
        ),
        # A thing named with its kind is that thing, not every thing of the name.
        (
            "a_kind_of_thing",
            "The mobile app is built with React Native.",
            "The mobile app was rewritten in Flutter.",
            True,
        ),
        (
            "another_kind_of_thing",
            "The mobile app is built with React Native.",
            "The web app was rewritten in Vue.",
            False,
        ),
        # An event's time is one at a time.
        (
            "a_meeting_moved",
            "The user's daily standup is at 9am.",
            "The user's daily standup was moved to 10am.",
            True,
        ),
        (
            "another_day_added",
            "The user's yoga class is on Tuesdays.",
            "The user's yoga class is on Tuesdays and Thursdays.",
            False,
        ),
        # A key said without an owner is the speaker's in a conversation.
        (
            "one_speakers_event_moved",
            "Ana: The game is at 7pm.",
            "Ana: The game was moved to 9pm.",
            True,
        ),
        ("two_speakers_two_events", "Ana: The game is at 7pm.", "Ben: The game is at 8pm.", False),
        # A date told as the plan that holds, then moved.
        (
            "a_planned_date_pushed_back",
            "The product launch is planned for March 3.",
            "The product launch was pushed back to April 14.",
            True,
        ),
        (
            "a_deadline_extended",
            "The project deadline is June 30.",
            "The project deadline was extended to August 15.",
            True,
        ),
        (
            "a_date_delayed",
            "Our launch is set for May 1.",
            "Our launch was delayed to May 20.",
            True,
        ),
        (
            "another_events_plan",
            "The launch is planned for March 3.",
            "The launch party is planned for March 10.",
            False,
        ),
        (
            "another_deadline",
            "The project deadline is June 30.",
            "The deadline for the grant was extended to July 10.",
            False,
        ),
        # Someone else changes the owner's key.
        (
            "raised_by_the_landlord",
            "The user's rent is $1,400 a month.",
            "The landlord raised the user's rent to $1,550 a month.",
            True,
        ),
        (
            "another_owners_key_raised",
            "The user's rent is $1,400 a month.",
            "The landlord raised Tom's rent to $1,600.",
            False,
        ),
        (
            "a_budget_owned_by_no_one_named",
            "The user's budget is $500.",
            "The manager cut the marketing budget to $300.",
            False,
        ),
        # A note: a field's label, a colon and its value.
        ("a_note", "Location: Berlin", "Location: Munich", True),
        ("an_owned_note", "User's favorite color: blue", "User's favorite color: green", True),
        ("a_note_and_a_move", "Location: Berlin", "The user moved to Munich.", True),
        ("a_note_said_again", "Location: Berlin", "The user lives in Berlin.", False),
        ("a_city_and_a_move", "The user's city is Berlin.", "The user moved to Munich.", True),
        ("a_list_is_no_field", "Hobbies: chess", "Hobbies: tennis", False),
        (
            "a_speaking_role",
            "Therapist: We talked about work.",
            "Therapist: We talked about sleep.",
            False,
        ),
        ("a_role_without_owner", "Manager: Rita", "Manager: Tom", False),
        ("a_role_with_owner", "User's manager: Rita", "User's manager: Tom", True),
        # A family's size, a child's grade, a dose, a raise, a title.
        (
            "a_second_child",
            "The user has one child.",
            "The user just had their second child.",
            True,
        ),
        (
            "a_couples_second_child",
            "The user and their wife have one child.",
            "The user and their wife just had their second child.",
            True,
        ),
        (
            "a_sisters_child",
            "The user has two kids.",
            "The user's sister had her third child.",
            False,
        ),
        (
            "a_grade_started",
            "The user's daughter is in third grade.",
            "The user's daughter started fourth grade this fall.",
            True,
        ),
        (
            "another_childs_grade",
            "The user's daughter is in third grade.",
            "The user's son is in fifth grade.",
            False,
        ),
        (
            "a_dose_increased",
            "The user takes 20 mg of lisinopril daily.",
            "The user's lisinopril dose was increased to 40 mg.",
            True,
        ),
        (
            "another_drugs_dose",
            "The user takes 20 mg of lisinopril daily.",
            "The user's metformin dose was increased to 1000 mg.",
            False,
        ),
        ("a_raise", "The user's salary is $85,000.", "The user got a raise to $95,000.", True),
        (
            "someone_elses_raise",
            "The user's salary is $85,000.",
            "The user's partner got a raise.",
            False,
        ),
        (
            "a_title",
            "The user is a product manager at Stripe.",
            "The user became head of product at Stripe.",
            True,
        ),
        (
            "a_title_of_no_employer",
            "The user is a product manager at Stripe.",
            "The user became head of the PTA at her school.",
            False,
        ),
        (
            "a_raise_asked_for",
            "The user's salary is $85,000.",
            "The user asked for a raise to $100,000.",
            False,
        ),
        # A project's settings: a port, a license, a URL, a schedule told with "happen".
        (
            "a_port_moved",
            "The staging database listens on port 5432.",
            "The staging database was moved to port 5433.",
            True,
        ),
        (
            "another_things_port",
            "The app runs on port 3000.",
            "The admin panel runs on port 3001.",
            False,
        ),
        (
            "a_port_moved_by_us",
            "The web app runs on port 8000.",
            "We moved the web app to port 8080.",
            True,
        ),
        (
            "another_things_switch",
            "The deploy target is Heroku.",
            "We moved the blog from Heroku to Netlify.",
            False,
        ),
        (
            "relicensed",
            "The project is licensed under MIT.",
            "The project was relicensed under Apache 2.0.",
            True,
        ),
        (
            "another_things_license",
            "The project is licensed under MIT.",
            "The logo is licensed under CC BY 4.0.",
            False,
        ),
        (
            "a_url_changed",
            "The API base URL is https://api.example.com/v1.",
            "The API base URL changed to https://api.example.com/v2.",
            True,
        ),
        (
            "a_schedule_instead_of",
            "Deploys happen on Fridays.",
            "Deploys now happen on Tuesdays instead of Fridays.",
            True,
        ),
        (
            "another_events_day",
            "Deploys happen on Fridays.",
            "The design review happens on Tuesdays.",
            False,
        ),
        # A switch that names the value it left ends a related key holding it.
        (
            "a_switch_of_a_related_key",
            "The deploy target is Heroku.",
            "We moved deployments from Heroku to Fly.io.",
            True,
        ),
        (
            "a_switch_of_another_key",
            "The team's database is MySQL.",
            "We migrated analytics from MySQL to BigQuery.",
            False,
        ),
        (
            "a_day_left_by_another_event",
            "The user's gym day is Monday.",
            "We moved the meeting from Monday to Tuesday.",
            False,
        ),
        # A status without a partner ends the partner; a partner ends being single.
        ("broke_up_with_the_partner", "User's partner is Alex.", "User and Alex broke up.", True),
        ("divorced", "Maria's husband is Tom.", "Maria got divorced.", True),
        ("a_partner_after_single", "The user is single.", "The user's girlfriend is Mia.", True),
        ("engaged_to_the_partner", "The user's boyfriend is Alex.", "The user got engaged.", False),
        # An age in words or digits; a commute however it is told.
        (
            "age_in_words",
            "The user's dog Biscuit is two years old.",
            "Biscuit turned three in May.",
            True,
        ),
        ("age_the_same", "Biscuit is 2 years old.", "Biscuit turned two.", False),
        (
            "pages_not_years",
            "Biscuit is two years old.",
            "Biscuit turned three pages of the book.",
            False,
        ),
        (
            "another_childs_age",
            "The user's son is 7 years old.",
            "The user's daughter turned 9.",
            False,
        ),
        (
            "commute_by_car",
            "The user commutes to work by car.",
            "The user sold the car and now cycles to work.",
            True,
        ),
        ("commute_on_foot", "The user gets to work by bus.", "The user now walks to work.", True),
        (
            "commute_once",
            "The user commutes to work by car.",
            "The user took the bus to work because the car was in the shop.",
            False,
        ),
        (
            "commute_not_work",
            "The user commutes to work by car.",
            "The user walks to the park every evening.",
            False,
        ),
        (
            "a_server_not_a_platform",
            "The database runs on MySQL 5.7.",
            "The database was moved to a bigger server.",
            False,
        ),
        # A key renamed, told of the key.
        (
            "a_key_renamed",
            "Default branch: master",
            "The default branch was renamed to main.",
            True,
        ),
        (
            "a_key_renamed_to_itself",
            "Default branch: main",
            "The default branch was renamed to main.",
            False,
        ),
        # A thing got in another's place.
        (
            "got_to_replace",
            "The user's laptop is a Dell XPS 13.",
            "The user bought a MacBook Pro to replace the Dell.",
            True,
        ),
        (
            "got_to_replace_something_else",
            "The user's laptop is a Dell XPS 13.",
            "The user bought a new monitor to replace the broken one.",
            False,
        ),
        # A habit abstained from, then taken up.
        # A hyphen joins a key's words: "the eating-out budget" is "the budget for eating out".
        (
            "a_hyphenated_key",
            "The user's monthly budget for eating out is $200.",
            "The user cut the eating-out budget to $120 a month.",
            True,
        ),
        # A plural key switched: one of them at a time.
        (
            "a_plural_key_switched",
            "The user's internet provider is Comcast.",
            "The user switched internet providers to Verizon Fios.",
            True,
        ),
        # "… and the user's new landlord is …": a clause with its own subject after "and".
        (
            "a_new_holder_after_and",
            "The user's landlord is Mr. Cho.",
            "The building was sold and the user's new landlord is Greystar.",
            True,
        ),
        # Who owns a thing, one owner at a time; another thing's owner is another key.
        (
            "ownership_moved",
            "The payments service is owned by Priya.",
            "Ownership of the payments service moved to Dan.",
            True,
        ),
        (
            "another_things_owner",
            "The payments service is owned by Priya.",
            "The billing service is now owned by Dan.",
            False,
        ),
        # A "we" of the writer's household moves the writer.
        ("a_household_we", "I live in Austin.", "We moved to Seattle.", True),
        ("a_teams_we_is_the_teams", "The user uses Jira.", "We use Linear.", False),
        # A comma before "my … is": a clause with its own subject.
        (
            "a_new_holder_after_a_comma",
            "My manager is Laura.",
            "Laura left, my new manager is Ben.",
            True,
        ),
        (
            "a_way_to_work_lately",
            "I commute by car.",
            "I've been biking to work since spring.",
            True,
        ),
        (
            "an_assistant_now",
            "I'm a nurse.",
            "I went back to school and I'm a physician assistant now.",
            True,
        ),
        # A thing named after its model year is still that thing.
        (
            "a_model_year",
            "The user drives a 2012 Subaru Outback to work.",
            "The user sold the Subaru.",
            True,
        ),
        (
            "abstained_then_started",
            "The user doesn't drink coffee.",
            "The user has started drinking coffee every morning.",
            True,
        ),
        ("never_then_started", "The user never smokes.", "The user started smoking again.", True),
        (
            "abstained_from_something_else",
            "The user doesn't drink alcohol.",
            "The user drinks coffee every morning.",
            False,
        ),
        (
            "abstained_only_at_a_time",
            "The user doesn't drink coffee after 3pm.",
            "The user drinks coffee every morning.",
            False,
        ),
    ],
)
def test_a_new_value_said_another_way_changes_it(_case, old, new, expected):
    assert _conflicts(old, new) is expected


@pytest.mark.parametrize(
    "text",
    [
        # A time is not a home ("in May"), and a key that may hold several values is not
        # changed by a switch of what it does.
        "He moved into a flat with Anna in May.",
        "My team switched to Kotlin.",
        # A wish is no preference, a place no school, one day no workplace, an owner-less
        # sentence no key unless the key holds one value.
        "The user wants to move to Paris in June.",
        "The user goes to Paris every summer.",
        "The user is working from home today.",
        "The weather is nice.",
        "Sprint planning was fun.",
        # A platform is read only of a project's thing.
        "Maria was moved to Accounting.",
        # Not knowing or not wanting is no habit abstained from.
        "The user doesn't know the answer.",
        "The user doesn't want to drive at night.",
        "He resigned himself to the result.",
        # Someone else's request.
        "Maria asked the user to bring tea.",
        "We put Friday down as the deadline.",
        "The team hired a new designer.",
        "My back is killing me.",
    ],
)
def test_a_look_alike_of_a_new_value_makes_no_claim(text):
    assert extract_claims(text) == []


@pytest.mark.parametrize(
    ("text", "entities", "states"),
    [
        ("Maria works as a nurse at St. Luke's hospital.", {"maria"}, True),
        ("Tom works as a chef at Luigi's.", {"maria"}, False),
        ("Tom works as a chef at Luigi's.", set(), True),  # anyone's
        ("The user works as a chef at Luigi's.", {"user"}, True),
        ("Maria adopted a puppy.", {"maria"}, False),  # pets, not a job
        ("Maria might work at Acme.", {"maria"}, False),  # a guess states nothing
    ],
)
def test_a_text_states_an_attribute_only_of_the_entities_asked_about(text, entities, states):
    assert states_attribute(text, frozenset({"employer", "role"}), frozenset(entities)) is states


def _conflicts(old: str, new: str) -> bool:
    """Whether any claim of ``new`` states another value than a claim of ``old``."""
    return any(
        conflict(left, right) for left in extract_claims(old) for right in extract_claims(new)
    )


@pytest.mark.parametrize(
    ("_case", "old", "new"),
    [
        ("phone_sold", "The user's phone is an iPhone 12.", "The user sold the iPhone."),
        ("car_traded_in", "The user's car is a Honda Civic.", "The user traded in the Civic."),
        ("drives_then_sold", "The user drives a Toyota Corolla.", "The user sold the Corolla."),
        ("bank_closed", "The user's bank is Chase.", "The user closed the Chase account."),
        (
            "membership_cancelled",
            "The user's gym is Planet Fitness.",
            "The user cancelled the Planet Fitness membership.",
        ),
        ("stopped_seeing", "The user's therapist is Dr. Lee.", "The user stopped seeing Dr. Lee."),
        (
            "business_sold",
            "Marco runs the bakery on Elm Street.",
            "Marco sold the bakery on Elm Street.",
        ),
        ("stepped_down", "Omar is the team lead.", "Omar stepped down as team lead."),
        (
            "handed_over",
            "Lena is the product manager for the mobile app.",
            "Lena handed the mobile app over to Raj.",
        ),
        ("replaced_as", "Alice is the project manager.", "Bob replaced Alice as project manager."),
        (
            "moved_from_a_held_value",
            "The user's password manager is LastPass.",
            "The user moved from LastPass to 1Password.",
        ),
        ("training_stopped", "The user is training for a marathon.", "The user stopped training."),
        ("couple_broke_up", "Ben is dating Chloe.", "Ben and Chloe broke up."),
        ("couple_married", "Jamal is engaged to Nina.", "Jamal and Nina got married in June."),
        ("couple_divorced", "John is married to Lisa.", "John and Lisa divorced last year."),
        ("dating_someone", "I'm single.", "I'm dating someone now."),
        ("moved_from_a_place", "I live in Berlin.", "I moved from Berlin to Munich."),
        ("a_reporting_line", "Priya's manager is Dan.", "Priya now reports to Elena."),
        (
            "a_key_now_one_value",
            "Our sprint length is two weeks.",
            "Our sprint length is now one week.",
        ),
        ("a_title_held", "Mike is the CTO.", "Mike stepped down as CTO."),
        # A project's things as subjects.
        (
            "a_projects_tool",
            "The project uses Jest for tests.",
            "The project switched from Jest to Vitest for tests.",
        ),
        (
            "a_projects_key",
            "The project's database is MongoDB.",
            "The project's database was changed to PostgreSQL.",
        ),
        (
            "a_repo_is_the_project",
            "The repo uses Jest for tests.",
            "The project uses Vitest for tests.",
        ),
        # The earlier statement may come second: the later memory is told apart by time.
        ("end_told_first", "The user sold the iPhone.", "The user's phone is an iPhone 12."),
        (
            "a_position_of_a_group",
            "Nora is the lead singer of the band.",
            "Nora stepped down as lead singer.",
        ),
        # The end told as the second verb of the sentence's subject.
        (
            "bought_then_sold",
            "Alex drives a Toyota Corolla.",
            "Alex bought a Tesla Model 3 and sold the Corolla.",
        ),
        (
            "tool_cancelled",
            "I use Spotify for music.",
            "I cancelled Spotify and use Apple Music now.",
        ),
    ],
)
def test_an_end_of_something_held_changes_it(_case, old, new):
    assert _conflicts(old, new)


@pytest.mark.parametrize(
    ("_case", "old", "new"),
    [
        ("sold_out", "Marco runs the bakery on Elm Street.", "Marco sold out of croissants."),
        (
            "stopped_by",
            "The user drinks coffee every morning.",
            "The user stopped by a coffee shop.",
        ),
        ("sold_something_else", "The user's phone is an iPhone 12.", "The user sold the old bike."),
        ("sold_a_thing_made", "Melanie's hobby is painting.", "Melanie sold a painting."),
        (
            "dropped_off",
            "The user's kid goes to Lincoln.",
            "The user dropped the kid off at Lincoln.",
        ),
        (
            "another_account",
            "The user's bank is Chase.",
            "The user opened a savings account at Ally.",
        ),
        # A key that may hold several values: another value adds one, it replaces nothing.
        ("another_held_value", "The user's bank is Chase.", "The user's bank is Ally."),
        ("another_holder", "Omar is the team lead.", "Lucia is the tech lead."),
        ("someone_else_ended_it", "Omar is the team lead.", "Lucia stepped down as team lead."),
        ("closed_for_the_day", "Diego owns a food truck.", "Diego closed the food truck early."),
        (
            "dropped_for_a_season",
            "The user's gym is Planet Fitness.",
            "The user dropped the Planet Fitness membership for the summer.",
        ),
        ("a_couple_adopting", "Audrey has two dogs.", "Audrey and Andrew adopted another puppy."),
        ("someone_else_dating", "I'm single.", "My sister is dating someone."),
        ("a_visit", "I live in Berlin.", "I visited Munich last weekend."),
        ("the_same_manager", "Priya's manager is Dan.", "Priya reports to Dan."),
        (
            "the_same_length",
            "Our sprint length is two weeks.",
            "Our sprint length is now two weeks.",
        ),
        ("another_thing", "The project uses Jest for tests.", "The website uses Vitest for tests."),
        # A tool ends only as a whole.
        ("one_use_ended", "I use Spotify for music.", "I stopped using Spotify for podcasts."),
        (
            "one_occasion_stopped",
            "The team deploys on Fridays.",
            "The team stopped the deploy on Friday because of a bug.",
        ),
        (
            "sold_something_else_too",
            "Alex drives a Toyota Corolla.",
            "Alex washed the car and sold some old books.",
        ),
        (
            "a_things_own_thing",
            "The project uses Jest for tests.",
            "The project's website uses Vitest for tests.",
        ),
    ],
)
def test_what_is_not_an_end_of_something_held_changes_nothing(_case, old, new):
    assert not _conflicts(old, new)


def _switch_changes(old: str, new: str) -> bool:
    """Whether ``new`` switches what ``old`` said of a kind (the detector reads an older
    memory's phrases only against a newer one's switch)."""
    olds = extract_claims(old) + phrase_claims(old)
    return any(conflict(left, right) for left in olds for right in extract_claims(new))


@pytest.mark.parametrize(
    ("_case", "old", "new"),
    [
        ("shift", "The user works night shifts.", "The user switched to day shifts."),
        ("team", "Aisha is on the night nursing team.", "Aisha transferred to the day team."),
        ("version", "We run Kubernetes 1.27.", "We upgraded to Kubernetes 1.29."),
        (
            "told_of_the_thing",
            "The cluster runs Kubernetes 1.27.",
            "The cluster was upgraded to Kubernetes 1.29.",
        ),
        (
            "setting",
            "The user prefers dark mode in the editor.",
            "The user switched the editor to light mode.",
        ),
    ],
)
def test_a_switch_to_another_value_of_a_kind_changes_it(_case, old, new):
    assert _switch_changes(old, new)


@pytest.mark.parametrize(
    ("_case", "old", "new"),
    [
        (
            "the_same_value",
            "Aisha is on the night nursing team.",
            "Aisha transferred to the night team.",
        ),
        ("another_kind", "The user works night shifts.", "The user switched to the night bus."),
        ("a_new_one", "The user works night shifts.", "The user switched to a new shift."),
        ("someone_else", "The user works night shifts.", "Maria switched to day shifts."),
        (
            "another_cluster",
            "The cluster runs Kubernetes 1.27.",
            "The staging cluster was upgraded to Kubernetes 1.29.",
        ),
        ("a_place", "The user works in Boston.", "The user moved to Denver."),
        ("a_thing_moved", "The user's car is blue.", "The user moved her car to the garage."),
        ("a_plan", "The user works night shifts.", "The user plans to switch to day shifts."),
    ],
)
def test_what_is_not_a_switch_of_a_kind_changes_nothing(_case, old, new):
    assert not _switch_changes(old, new)
