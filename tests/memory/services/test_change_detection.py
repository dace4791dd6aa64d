"""The change detector on the write path: a new value for an attribute the subject holds a
live memory about retires the older memory (explicit or promoted write), or flags both where
deciding would be a guess; an unchanged fact is never retired."""

from datetime import UTC, datetime

import pytest

from apps.extraction.promotion.types import Candidate
from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    MemoryDraft,
    memory_create_many,
    memory_embed_pending,
    memory_forget,
    memory_remember,
    memory_supersede,
    promotion_persist,
)
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

MARCH = datetime(2024, 3, 1, tzinfo=UTC)
JUNE = datetime(2024, 6, 1, tzinfo=UTC)
SEPTEMBER = datetime(2024, 9, 1, tzinfo=UTC)


def _write(tenant, text, when=None, subject="a", **draft):
    return memory_remember(
        tenant=tenant, subject_id=subject, draft=MemoryDraft(text=text, occurred_at=when, **draft)
    )


def _state(memory):
    memory.refresh_from_db()
    return memory


def test_a_new_employer_retires_the_old_one_from_when_it_began(tenant):
    old = _write(tenant, "The user works at Stripe.", MARCH)

    new = _write(tenant, "The user works at Google as an engineer.", JUNE)

    old, new = _state(old), _state(new)
    assert (old.superseded_by_id, old.valid_to) == (new.pk, JUNE)
    assert (new.supersedes, new.supersede_reason) == ([old.pk], "changed_value:employer")
    assert (new.superseded_by_id, new.conflicts_with, old.conflicts_with) == (None, [], [])
    now = memory_recall(tenant=tenant, subject_id="a", query="where does the user work")
    then = memory_recall(
        tenant=tenant, subject_id="a", query="where does the user work", as_of=MARCH
    )
    assert [hit.memory.pk for hit in now.results] == [new.pk]
    assert [hit.memory.pk for hit in then.results] == [old.pk]


def test_a_job_change_told_in_passing_retires_the_old_job(tenant):
    nurse = _write(tenant, "Maria works as a nurse at St. Luke's hospital.", MARCH)
    _write(tenant, "Maria's favourite film is Arrival.", JUNE)
    analyst = _write(
        tenant, "Maria left the hospital and now works as a data analyst at Globex.", SEPTEMBER
    )

    nurse = _state(nurse)
    assert (nurse.superseded_by_id, nurse.valid_to) == (analyst.pk, SEPTEMBER)
    memory_embed_pending(memory_ids=[str(m.pk) for m in Memory.objects.filter(tenant=tenant)])
    now = memory_recall(tenant=tenant, subject_id="a", query="Where does Maria work?")
    then = memory_recall(tenant=tenant, subject_id="a", query="Where does Maria work?", as_of=JUNE)
    assert now.results[0].memory.pk == analyst.pk
    assert nurse.pk not in [hit.memory.pk for hit in now.results]
    then_ids = [hit.memory.pk for hit in then.results]
    assert nurse.pk in then_ids
    assert analyst.pk not in then_ids


@pytest.mark.parametrize(
    ("_case", "old_text", "new_text", "reason"),
    [
        ("moved", "I live in Boston.", "I just moved to Seattle last week.", "residence"),
        ("dating_ended", "Alice is dating Tom.", "Alice broke up with Tom.", "relationship"),
        (
            "favourite",
            "My favorite color is blue.",
            "My favorite color is now green.",
            "favorite color",
        ),
        (
            "new_number",
            "My phone number is 555-1234.",
            "My new phone number is 555-9876.",
            "phone number",
        ),
        (
            "new_manager",
            "The user's manager is Rita.",
            "The user's new manager is Omar.",
            "manager",
        ),
        ("quit", "Maria works at Acme.", "Maria quit Acme.", "employer"),
        (
            "left_and_joined",
            "I work at Google as an engineer.",
            "I left Google and joined Meta.",
            "employer",
        ),
        ("new_occupation", "John is a teacher.", "John is now a principal.", "role"),
        ("tool_switched", "The team uses Jira.", "The team switched from Jira to Linear.", "tool"),
        (
            "what_was_migrated_named_first",
            "The team uses PostgreSQL for the billing service.",
            "The team migrated the billing service from PostgreSQL to MySQL.",
            "tool",
        ),
        (
            "an_address_changed",
            "Carol's email is carol@old.example.com.",
            "Carol changed her email to carol@new.example.com.",
            "email",
        ),
        (
            "a_rate_raised",
            "The user's hourly rate is $80.",
            "The user raised the hourly rate to $95.",
            "hourly rate",
        ),
        (
            "a_new_holder",
            "The user's landlord is Mr. Green.",
            "The user has a new landlord, Ms. Ortiz.",
            "landlord",
        ),
        (
            "switched_to_another",
            "The user's dentist is Dr. Kim.",
            "The user switched dentists to Dr. Patel.",
            "dentist",
        ),
        (
            "a_held_thing_sold",
            "The user's phone is an iPhone 12.",
            "The user sold the iPhone.",
            "phone",
        ),
        (
            "an_account_closed",
            "The user's bank is Chase.",
            "The user closed the Chase account and moved everything to Ally.",
            "bank",
        ),
        (
            "a_position_left",
            "Omar is the team lead.",
            "Omar stepped down as team lead.",
            "activity",
        ),
        (
            "a_successor_named",
            "Alice is the project manager.",
            "Bob replaced Alice as project manager.",
            "activity",
        ),
        ("a_couple_parted", "Ben is dating Chloe.", "Ben and Chloe broke up.", "relationship"),
        (
            "a_shift_switched",
            "The user works night shifts.",
            "The user switched to day shifts.",
            "shift",
        ),
        (
            "a_platform_migrated",
            "The database runs on MySQL 5.7.",
            "The database was migrated to PostgreSQL 15.",
            "tool",
        ),
        (
            "a_tool_cancelled",
            "I use Spotify for music.",
            "I cancelled Spotify and use Apple Music now.",
            "tool",
        ),
        (
            "a_home_then_its_place",
            "The user lives in a studio apartment in Brooklyn.",
            "The user just moved into a house in Queens.",
            "residence",
        ),
        (
            "a_named_pet_died",
            "The user has a parrot named Kiwi.",
            "Kiwi, the user's parrot, died last week.",
            "alive",
        ),
        (
            "a_relative_died",
            "Olga's grandmother lives in Kyiv.",
            "Olga's grandmother passed away in March.",
            "residence",
        ),
        (
            "an_event_moved",
            "The weekly sync is on Tuesdays at 2pm.",
            "The weekly sync was moved to Thursdays.",
            "sync",
        ),
        (
            "an_event_moved_by_the_team",
            "The retro is at 4pm on Fridays.",
            "We moved the retro to 11am.",
            "retro",
        ),
        (
            "a_limit_raised",
            "The upload size limit is 10 MB.",
            "The upload size limit was increased to 50 MB.",
            "upload size limit",
        ),
        (
            "back_in_the_office",
            "The user works from home.",
            "The user is back in the office five days a week.",
            "workplace",
        ),
        (
            "married_the_fiancee",
            "The user is engaged to Priya.",
            "The user and Priya got married in June.",
            "relationship",
        ),
        (
            "a_new_school",
            "The user's son attends Maple Preschool.",
            "The user's son started kindergarten at Hillside Elementary.",
            "school",
        ),
        (
            "graduated",
            "Ken is a student at MIT.",
            "Ken graduated from MIT and joined Google.",
            "employer",
        ),
        (
            "another_way_to_work",
            "The user drives to work.",
            "The user now takes the train to work.",
            "commute",
        ),
        (
            "now_teaches_another_thing",
            "Tom teaches piano at the community center.",
            "Tom now teaches guitar at the community center.",
            "activity",
        ),
        (
            "preferred_over",
            "The user prefers tea.",
            "The user now prefers coffee over tea.",
            "choice",
        ),
        (
            "wanted_another_way",
            "The user wants summaries in bullet points.",
            "The user now wants summaries as short paragraphs.",
            "choice",
        ),
        (
            "a_things_platform_from_to",
            "The frontend is written in Angular.",
            "We migrated the frontend from Angular to React.",
            "tool",
        ),
        (
            "a_title_promoted",
            "Emma's title is senior designer.",
            "Emma was promoted to design director.",
            "title",
        ),
        (
            "a_position_promoted",
            "Emma is the head of marketing.",
            "Emma was promoted to VP of marketing.",
            "activity",
        ),
        (
            "a_doer_quit",
            "The user is a smoker.",
            "The user quit smoking in January.",
            "activity",
        ),
        (
            "quit_for_a_reason",
            "Noah plays basketball every Sunday.",
            "Noah quit basketball to focus on his studies.",
            "activity",
        ),
        (
            "a_default_raised",
            "The max file size is 25 MB.",
            "The max file size was raised to 100 MB.",
            "max file size",
        ),
        (
            "a_monthly_event_moved",
            "The quarterly review is on the first Monday of the month.",
            "The quarterly review was moved to Fridays.",
            "quarterly review",
        ),
        (
            "a_doubled_consonant",
            "Maya swims every morning.",
            "Maya stopped swimming because of an ear infection.",
            "activity",
        ),
        (
            "a_key_switched_from_to",
            "The user's gym is Planet Fitness.",
            "The user switched gyms from Planet Fitness to Equinox.",
            "gym",
        ),
        (
            "a_kind_of_activity_given_up",
            "Sam is training for a half marathon.",
            "Sam gave up running after his knee surgery.",
            "activity",
        ),
        (
            "alcohol_quit",
            "The user drinks a glass of wine every evening.",
            "The user quit drinking alcohol.",
            "activity",
        ),
        (
            "getting_divorced",
            "Marcus is married to Julia.",
            "Marcus and Julia are getting divorced.",
            "relationship",
        ),
        (
            "eggs_again",
            "Ravi is vegan.",
            "Ravi started eating eggs again.",
            "diet",
        ),
        (
            "a_home_of_her_own",
            "Grace lives with her parents.",
            "Grace moved into her own apartment.",
            "household",
        ),
        (
            "a_plan_that_is_a_noun",
            "The user's internet provider is Comcast.",
            "The user dropped Comcast for a fiber plan from Sonic.",
            "internet provider",
        ),
        (
            "renamed",
            "The main branch is called master.",
            "We renamed the main branch to main.",
            "name of main branch",
        ),
        (
            "left_the_company",
            "Mike is the CTO.",
            "Mike left the company.",
            "activity",
        ),
        (
            "a_provider_moved_from",
            "The user's savings are with Marcus by Goldman Sachs.",
            "The user moved the savings from Marcus to Wealthfront.",
            "savings",
        ),
        (
            "replaced_what_it_runs_on",
            "Our error tracking runs on Sentry.",
            "We replaced Sentry with Datadog for error tracking.",
            "error tracking",
        ),
        (
            "a_schedule_changed",
            "The on-call rotation is weekly.",
            "The on-call rotation changed to every two weeks.",
            "on-call rotation",
        ),
        (
            "a_date_pushed",
            "The code freeze is on December 15.",
            "The code freeze was pushed to December 20.",
            "code freeze",
        ),
        (
            "seeing_someone",
            "The user is single.",
            "The user has been seeing someone named Jordan since March.",
            "relationship",
        ),
        (
            "pushed_back",
            "The team's standup is at 9:15.",
            "We pushed standup back to 9:45.",
            "standup",
        ),
        (
            "now_with_another",
            "The user flies with United.",
            "The user now flies with Delta for work trips.",
            "flies",
        ),
        (
            "a_pr_merged",
            "The payments migration PR is in review.",
            "The payments migration PR was merged.",
            "status of payments migration pr",
        ),
        (
            "a_bug_fixed",
            "Bug 4512 is open.",
            "Bug 4512 was fixed in release 2.3.",
            "status of bug 4512",
        ),
        (
            "no_longer_blocked",
            "The deploy is blocked on the security review.",
            "The deploy is no longer blocked; the security review passed.",
            "status of deploy",
        ),
        (
            "reassigned",
            "Ticket OPS-88 is assigned to Maria.",
            "Ticket OPS-88 was reassigned to Dev.",
            "assignee of ticket ops-88",
        ),
        (
            "goes_by",
            "The user's preferred name is Robert.",
            "The user now goes by Bob.",
            "preferred name",
        ),
        (
            "the_team_and_its_project",
            "The project's test runner is Jest.",
            "We switched the test runner from Jest to Vitest.",
            "test runner",
        ),
        (
            "a_model_upgraded",
            "The user's phone is a Pixel 6.",
            "The user upgraded to a Pixel 8.",
            "phone",
        ),
        (
            "an_address_moved_to",
            "The user's address is 12 Oak Street, Portland.",
            "The user moved to 48 Pine Avenue, Seattle.",
            "address",
        ),
        (
            "a_verbs_object_switched",
            "The user drinks oat milk.",
            "The user switched from oat milk to almond milk.",
            "drinks",
        ),
        (
            "how_much_a_day",
            "Chen drinks three coffees a day.",
            "Chen quit coffee last month.",
            "activity",
        ),
        (
            "a_keys_old_value_in_other_words",
            "The user banks with Chase.",
            "The user switched banks from Chase to Ally.",
            "banks",
        ),
        (
            "a_service_migrated_to_another_database",
            "The billing service uses PostgreSQL.",
            "We migrated the billing service to CockroachDB.",
            "tool",
        ),
        ("a_tool_of_the_kind", "I use Vim as my editor.", "I've switched to VS Code.", "tool"),
        (
            "a_verb_with_a_tool",
            "The user browses with Chrome.",
            "The user switched to Firefox.",
            "browses",
        ),
        (
            "the_same_activity_another_way",
            "Leo coaches the junior football team on Saturdays.",
            "Leo now coaches the senior team on Saturdays.",
            "activity",
        ),
        (
            "a_part_time_job_quit",
            "Emma works part-time at the library.",
            "Emma quit the library job.",
            "employer",
        ),
        (
            "an_engagement_called_off",
            "Daniel is engaged to Sophie.",
            "Daniel and Sophie called off the engagement.",
            "relationship",
        ),
        (
            "a_name_that_reads_as_a_judgement",
            "The user's favourite podcast is Radiolab.",
            "These days the user's favourite podcast is Hard Fork.",
            "favourite podcast",
        ),
        (
            "a_rented_home_then_one_bought",
            "The user rents an apartment downtown.",
            "The user bought a house in the suburbs.",
            "home",
        ),
        (
            "a_key_named_in_other_words",
            "The user's monthly budget for groceries is $400.",
            "The user cut the grocery budget to $300 a month.",
            "grocery budget",
        ),
        (
            "a_tool_moved_to_is_no_place",
            "The user writes code in Sublime Text.",
            "The user moved over to Neovim.",
            "writes",
        ),
        (
            "a_key_said_with_two_words_before_it",
            "The user's weekly grocery budget is $120.",
            "The user raised the grocery budget to $150 a week.",
            "grocery budget",
        ),
        (
            "a_routine_on_other_days_now",
            "The user goes to the gym on Mondays and Thursdays.",
            "The user now goes to the gym on Tuesdays and Fridays.",
            "activity",
        ),
        (
            "a_site_migrated",
            "The marketing site is hosted on Netlify.",
            "The marketing site was migrated to Vercel.",
            "tool",
        ),
    ],
)
def test_a_change_said_in_everyday_words_retires_the_old_fact(
    tenant, _case, old_text, new_text, reason
):
    old = _write(tenant, old_text, MARCH)

    new = _write(tenant, new_text, JUNE)

    old = _state(old)
    assert old.superseded_by_id == new.pk
    assert _state(new).supersede_reason == f"changed_value:{reason}"


@pytest.mark.parametrize(
    ("_case", "old_text", "new_text"),
    [
        ("same_value_restated", "The user lives in Lisbon.", "The user moved to Lisbon."),
        ("someone_elses_job", "I am a nurse.", "My mom is a doctor."),
        (
            "another_role_beside",
            "I am an engineer at Google.",
            "I am also a volunteer firefighter.",
        ),
        ("the_employers_office", "I work at Acme.", "I left Acme's office early today."),
        ("more_of_the_same_job", "John is a teacher.", "John is a teacher at Lincoln High."),
        ("a_habit_quit", "I work at Acme.", "I quit smoking last month."),
        ("more_detail", "The user works at Stripe.", "The user works at Stripe in Dublin."),
        ("other_attribute", "The user lives in Lisbon.", "The user is vegan."),
        ("hedged", "The user lives in Lisbon.", "The user might move to Porto."),
        ("planned", "The user works at Stripe.", "The user plans to work at Google next year."),
        ("someone_else", "The user lives in Lisbon.", "The user's sister moved to Porto."),
        ("no_attribute", "The user likes tea.", "The user likes coffee more these days."),
        (
            "the_same_address_again",
            "Carol's email is carol@example.com.",
            "Carol changed her email to carol@example.com.",
        ),
        (
            "a_thing_moved_somewhere",
            "Carol's car is a red Tesla.",
            "Carol moved her car to the garage.",
        ),
        (
            "something_else_moved",
            "The team uses PostgreSQL for the billing service.",
            "The team moved the standup from Monday to Tuesday.",
        ),
        (
            "someone_elses_pet_died",
            "The user has a parrot named Kiwi.",
            "The user's neighbour's dog died last week.",
        ),
        (
            "a_relatives_new_lessons",
            "Tom teaches piano at the community center.",
            "Tom's daughter now takes guitar lessons.",
        ),
        (
            "also_teaches",
            "Tom teaches piano at the community center.",
            "Tom now also teaches guitar at the community center.",
        ),
        (
            "another_appointment_moved",
            "The weekly sync is on Tuesdays at 2pm.",
            "The user moved the dentist appointment to Thursday.",
        ),
        (
            "another_number_raised",
            "The upload size limit is 10 MB.",
            "The download speed was increased to 50 Mbps.",
        ),
        (
            "someone_elses_promotion",
            "Lena is a junior analyst at Deloitte.",
            "Lena's manager was promoted to partner.",
        ),
        (
            "a_trip_not_a_commute",
            "The user drives to work.",
            "The user took the train to Boston for a conference.",
        ),
        (
            "someone_elses_preference",
            "The user prefers tea.",
            "The user's wife now prefers coffee.",
        ),
        (
            "one_day_in_the_office",
            "The user works from home.",
            "The user is working from the office today.",
        ),
        (
            "someone_else_graduated",
            "Ken is a student at MIT.",
            "Ken's sister graduated from MIT.",
        ),
        (
            "a_role_elsewhere",
            "Emma is the captain of the soccer team.",
            "Emma was promoted to senior engineer.",
        ),
        (
            "coffee_is_not_alcohol",
            "The user drinks a glass of wine every evening.",
            "The user stopped drinking coffee.",
        ),
        (
            "a_team_position_outlives_a_job",
            "Emma is the captain of the soccer team.",
            "Emma lost her job.",
        ),
        (
            "another_thing_renamed",
            "The main branch is called master.",
            "We renamed the staging server to atlas.",
        ),
        (
            "a_part_replaced",
            "Our error tracking runs on Sentry.",
            "We replaced the Sentry dashboard with a new layout.",
        ),
        (
            "stopped_for_a_spell",
            "The user jogs three times a week.",
            "The user stopped jogging for a week because of the rain.",
        ),
        (
            "another_event_pushed",
            "The code freeze is on December 15.",
            "The holiday party was pushed to December 20.",
        ),
        (
            "someone_elses_switch",
            "The user takes metformin for diabetes.",
            "The user's mother switched from metformin to insulin.",
        ),
        (
            "now_also",
            "The user flies with United.",
            "The user now also flies with Delta.",
        ),
        (
            "another_pr_merged",
            "The payments migration PR is in review.",
            "The docs PR was merged.",
        ),
        (
            "another_bug_fixed",
            "Bug 4512 is open.",
            "Bug 4513 was fixed in release 2.3.",
        ),
        (
            "another_ticket_assigned",
            "Ticket OPS-88 is assigned to Maria.",
            "Ticket OPS-90 was assigned to Dev.",
        ),
        (
            "a_person_is_not_work",
            "The user is ready.",
            "The user is blocked on the API key.",
        ),
        (
            "someone_elses_upgrade",
            "The user's phone is a Pixel 6.",
            "The user's wife upgraded to a Pixel 8.",
        ),
        (
            "a_switch_from_part_of_it",
            "The user speaks Spanish at home.",
            "The user switched from Spanish to Japanese lessons.",
        ),
        (
            "a_sibling_died",
            "The user's sister lives in Rome.",
            "The user's grandfather died in 1990.",
        ),
        (
            "another_kind_of_tool_moved_to",
            "The billing service uses Redis for caching.",
            "We migrated the billing service to CockroachDB.",
        ),
        (
            "another_kind_on_the_same_thing",
            "The billing service runs on Kubernetes.",
            "We migrated the billing service to CockroachDB.",
        ),
        (
            "a_package_manager_of_another_language",
            "The user uses pip for Python packages.",
            "The user switched to pnpm.",
        ),
        (
            "a_tool_of_the_kind_used_beside",
            "The user uses Jira for bugs.",
            "The user also uses Linear for side projects.",
        ),
        ("another_game_now", "The user plays football on Sundays.", "The user now plays tennis."),
        (
            "someone_elses_browser",
            "The user browses with Chrome.",
            "The user's son switched to Firefox.",
        ),
        (
            "a_second_home_bought",
            "The user rents a studio in Brooklyn.",
            "The user bought a beach house in Maine.",
        ),
        (
            "a_home_bought_for_someone_else",
            "The user rents an apartment downtown.",
            "The user bought a condo for her parents.",
        ),
        (
            "a_landlords_room",
            "The user owns a house in Austin.",
            "The user rents a room to a student.",
        ),
        (
            "another_periods_rate",
            "The user's hourly rate is $80.",
            "The user's daily rate is $600.",
        ),
        ("another_email", "The user's email is a@x.com.", "The user's work email is b@y.com."),
        (
            "another_laptop",
            "The user's work laptop is a Dell XPS 13.",
            "The user's personal laptop is a MacBook Air.",
        ),
        (
            "another_budget",
            "The user's weekly grocery budget is $120.",
            "The user's weekly fuel budget is $60.",
        ),
        (
            "someone_elses_editor",
            "The user writes code in Sublime Text.",
            "The user's intern moved over to Neovim.",
        ),
        (
            "a_routine_on_one_more_day",
            "The user goes to the gym on Mondays and Thursdays.",
            "The user now also goes to the gym on Saturdays.",
        ),
        (
            "a_routine_told_again_on_another_day",
            "The user goes to the gym on Mondays.",
            "The user goes to the gym on Fridays.",
        ),
        (
            "another_site_migrated",
            "The marketing site is hosted on Netlify.",
            "The docs site was migrated to Vercel.",
        ),
        (
            "a_service_moved_not_the_teams_tools",
            "We use MySQL for analytics.",
            "We migrated the billing service to CockroachDB.",
        ),
    ],
)
def test_an_unchanged_fact_is_never_retired(tenant, _case, old_text, new_text):
    old = _write(tenant, old_text, MARCH)

    new = _write(tenant, new_text, JUNE)

    old, new = _state(old), _state(new)
    assert (old.superseded_by_id, old.valid_to, old.conflicts_with) == (None, None, [])
    assert (new.supersedes, new.supersede_reason, new.conflicts_with) == ([], "", [])


def test_a_fact_written_late_about_the_past_takes_its_place_in_time(tenant):
    current = _write(tenant, "The user lives in Lisbon.", SEPTEMBER)

    past = _write(tenant, "The user lives in Berlin.", MARCH)

    current, past = _state(current), _state(past)
    assert (past.superseded_by_id, past.valid_to) == (current.pk, SEPTEMBER)
    assert (current.superseded_by_id, current.supersedes) == (None, [past.pk])


def test_a_history_written_in_one_batch_retires_each_value_by_the_next(tenant):
    # Written out of order: valid time, not the order of the batch, decides.
    porto, berlin, lisbon = memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=[
            MemoryDraft("The user lives in Porto.", occurred_at=SEPTEMBER),
            MemoryDraft("The user lives in Berlin.", occurred_at=MARCH),
            MemoryDraft("The user lives in Lisbon.", occurred_at=JUNE),
        ],
    )

    porto, berlin, lisbon = _state(porto), _state(berlin), _state(lisbon)
    assert (berlin.superseded_by_id, berlin.valid_to) == (lisbon.pk, JUNE)
    assert (lisbon.superseded_by_id, lisbon.valid_to) == (porto.pk, SEPTEMBER)
    assert (porto.superseded_by_id, porto.supersedes) == (None, [lisbon.pk])


@pytest.mark.parametrize(
    ("_case", "second_when", "second_source"),
    [
        ("the_same_time", MARCH, MemorySource.EXPLICIT),
        ("promoted_over_explicit", JUNE, MemorySource.PROMOTED),
    ],
)
def test_a_change_that_would_be_a_guess_flags_both(tenant, _case, second_when, second_source):
    first = _write(tenant, "The user lives in Berlin.", MARCH)

    second = _write(tenant, "The user lives in Lisbon.", second_when, source=second_source)

    first, second = _state(first), _state(second)
    assert (first.superseded_by_id, second.superseded_by_id) == (None, None)
    assert (first.conflicts_with, second.conflicts_with) == ([second.pk], [first.pk])
    assert (first.valid_to, second.valid_to) == (None, None)


def test_an_older_memory_that_says_more_is_flagged_not_retired(tenant):
    old = _write(
        tenant,
        "The user lives in Berlin. The user plays the cello in an orchestra. The user has a "
        "brother called Tom.",
        MARCH,
    )

    new = _write(tenant, "The user lives in Lisbon.", JUNE)

    old = _state(old)
    assert (old.superseded_by_id, old.conflicts_with) == (None, [new.pk])
    result = memory_recall(tenant=tenant, subject_id="a", query="user lives", mode="keyword")
    assert [hit.memory.pk for hit in result.results] == [new.pk, old.pk]  # the later fact first


def test_an_old_value_told_again_is_flagged_not_taken_back(tenant):
    """Lost a job, found one, then the loss is told again: a change back or a retelling —
    nothing says which, so the current job is not retired."""
    lost = _write(tenant, "Gina lost her job at Door Dash.", MARCH)
    found = _write(tenant, "Gina works at Zara as a designer.", JUNE)

    retold = _write(tenant, "Gina lost her job at Door Dash.", SEPTEMBER, tags=["again"])

    lost, found, retold = _state(lost), _state(found), _state(retold)
    assert lost.superseded_by_id == found.pk
    assert (found.superseded_by_id, retold.superseded_by_id) == (None, None)
    assert found.conflicts_with == [retold.pk]


def test_other_subjects_and_project_partitions_are_never_touched(tenant, other_tenant):
    project = ProjectFactory.create(tenant=tenant)
    theirs = _write(tenant, "The user lives in Berlin.", MARCH, subject="b")
    foreign = memory_remember(
        tenant=other_tenant,
        subject_id="a",
        draft=MemoryDraft("The user lives in Berlin.", occurred_at=MARCH),
    )
    in_project = _write(tenant, "The user lives in Berlin.", MARCH, project_id=project.pk)

    _write(tenant, "The user lives in Lisbon.", JUNE)

    for row in (theirs, foreign, in_project):
        row = _state(row)
        assert (row.superseded_by_id, row.conflicts_with, row.valid_to) == (None, [], None)


def test_an_explicit_supersede_also_retires_other_memories_of_the_old_value(tenant):
    named = _write(tenant, "The user works at Stripe.", MARCH)
    restated = _write(tenant, "The user works at Stripe as an engineer.", MARCH)

    new = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=named.pk,
        draft=MemoryDraft("The user works at Google.", occurred_at=JUNE),
    )

    named, restated, new = _state(named), _state(restated), _state(new)
    assert named.superseded_by_id == restated.superseded_by_id == new.pk
    assert sorted(new.supersedes, key=str) == sorted([named.pk, restated.pk], key=str)


def test_detection_off_writes_nothing_but_the_memory(tenant, settings):
    settings.MEMORY_CHANGE_DETECTION_ENABLED = False
    old = _write(tenant, "The user works at Stripe.", MARCH)

    _write(tenant, "The user works at Google.", JUNE)

    assert _state(old).superseded_by_id is None


def test_promotion_retires_what_it_promoted_before_but_never_an_explicit_memory(tenant):
    explicit = _write(tenant, "The user lives in Berlin.", MARCH)
    first = promotion_persist(
        tenant=tenant,
        subject_id="a",
        session_id="s1",
        candidates=[Candidate(text="The user works at Stripe.", confidence=0.8, occurred_at=MARCH)],
    )

    later = promotion_persist(
        tenant=tenant,
        subject_id="a",
        session_id="s2",
        candidates=[
            Candidate(text="The user works at Google.", confidence=0.8, occurred_at=JUNE),
            Candidate(text="The user lives in Lisbon.", confidence=0.8, occurred_at=JUNE),
        ],
    )

    stripe = Memory.objects.get(pk=first.memory_ids[0])
    google, lisbon = (Memory.objects.get(pk=pk) for pk in later.memory_ids)
    assert (stripe.superseded_by_id, stripe.valid_to) == (google.pk, JUNE)
    assert (later.changed, later.conflicts) == (1, 1)
    explicit = _state(explicit)
    assert (explicit.superseded_by_id, explicit.conflicts_with) == (None, [lisbon.pk])


def _keyword_hits(tenant, query, subject="a"):
    result = memory_recall(tenant=tenant, subject_id=subject, query=query, mode="keyword")
    return [hit.memory.text for hit in result.results]


def test_what_holds_now_is_found_by_the_words_of_what_it_replaced(tenant):
    _write(tenant, "The user has a hamster named Peanut.", MARCH)
    _write(tenant, "The user's sister has a garden.", MARCH)

    died = _write(tenant, "Peanut died over the weekend.", JUNE)

    hits = _keyword_hits(tenant, "Does the user have a hamster?")
    assert hits[0] == died.text


def test_a_forgotten_old_version_leaves_the_words_of_the_one_that_replaced_it(tenant):
    old = _write(tenant, "The user has a hamster named Peanut.", MARCH)
    died = _write(tenant, "Peanut died over the weekend.", JUNE)
    assert _state(old).superseded_by_id == died.pk

    memory_forget(tenant=tenant, subject_id="a", memory_id=old.pk)

    assert _keyword_hits(tenant, "hamster") == []
    assert _keyword_hits(tenant, "Peanut") == [died.text]
    assert "hamster" not in _state(died).derived_context


def test_a_memory_the_client_gave_context_quotes_nothing_it_replaced(tenant):
    _write(tenant, "The user has a hamster named Peanut.", MARCH)

    died = _write(tenant, "Peanut died over the weekend.", JUNE, context="pets")

    assert _state(died).supersedes
    assert _keyword_hits(tenant, "hamster") == []


def test_a_rule_stem_the_search_configuration_would_stem_again_still_finds_the_old_memory(
    tenant,
):
    # The rules' topic "respons" (of "responses") is stemmed "respon" by the text search
    # configuration, which the old memory's "responses" ("respons") is not.
    spanish = _write(tenant, "The user wants responses in Spanish.", MARCH)

    english = _write(tenant, "The user asked to switch responses back to English.", JUNE)

    spanish = _state(spanish)
    assert (spanish.superseded_by_id, spanish.valid_to) == (english.pk, JUNE)


def test_a_dose_changed_by_the_doctor_retires_the_old_dose(tenant):
    old = _write(tenant, "The user takes 50 mg of sertraline daily.", MARCH)
    unrelated = _write(tenant, "The user took an extra vitamin D today.", JUNE)

    new = _write(tenant, "The user's doctor raised the sertraline dose to 100 mg.", SEPTEMBER)

    assert (_state(old).superseded_by_id, _state(unrelated).superseded_by_id) == (new.pk, None)
