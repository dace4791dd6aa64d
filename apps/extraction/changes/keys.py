# length: every way a sentence tells a key's value, and the one reader that tries them in order;
# split, a pattern would sit apart from the order that decides which one reads a sentence.
"""A key's value: "my favourite colour is blue", "the user's manager is Rita", "the upload
size limit was increased to 50 MB", "we moved the retro to 11am" — what a sentence says a named
key of its subject (or of no one named) holds, and whether the key holds one value at a time."""

from __future__ import annotations

import re

from apps.extraction.changes.fields import SINGLE_VALUED_KEYS, field_label
from apps.extraction.changes.patterns import (
    HELD,
    HOLDS,
    Finding,
    unsettled,
    value_text,
    words,
)
from apps.extraction.changes.text import BODY_PARTS, THING_NAMES, THINGS, WRITER, opened_parts

#: One value: no clause punctuation, but a dot inside it (an address, a version), a title's
#: ("Mr. Green", "Dr. Kim"), a thousands comma ("$2,100") and a comma before a name ("12 Oak
#: Street, Portland": the value read is what comes before it).
_VALUE = (
    r"(?:[^,;.!?()]|\.(?=\S)|(?:(?<=Mr)|(?<=Ms)|(?<=Dr)|(?<=St)|(?<=Mrs))\.\s|,(?=\d{3}\b)|"
    r",\s(?=[A-Z]))"
)
#: A thing named with its version: "a Pixel 6", "Python 3.12" (a value keeps the number).
_VERSIONED_VALUE = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?P<value>[A-Za-z][\w+#-]*\s+v?\d+(?:\.\d+)*)\b", re.I
)
#: Whose key it is, as a possessive ("the user's", "my", "Carol's") or as the subject.
_OWNER = (
    rf"^(?P<owner>(?i:the user's|the team's|my|our|the (?:{THING_NAMES})(?:'s|’s))|"
    r"(?P<name>[A-Z][a-z]+)(?:'s|’s))\s+"
)
_SUBJECT = (
    rf"^(?P<owner>(?i:the user|the team|i|we|the (?:{THING_NAMES}))|(?P<name>[A-Z][a-z]+))\s+"
)
_KEY = r"(?P<key>[a-z][a-z0-9 -]{1,40}?)"
#: Verbs that move a key's value up or down ("raised the hourly rate to $95").
_RAISED = r"raised|lowered|increased|decreased|reduced|cut|bumped|upped"
#: Verbs that move a date or a time ("the deadline was extended to August 15").
_DEFERRED = r"extended|postponed|delayed|pushed back|pushed out|brought forward|moved up"
#: A value told as a plan: "the launch is planned for March 3", "the review is set for Friday"
#: (the time itself is the value; a time-less plan holds no value: see ``_WHEN``).
_PLANNED = r"(?:(?:planned|scheduled|set|slated|due|booked)\s+(?:for|on)\s+)?"
#: "my favourite colour is blue", "Andrew's manager is Rita", "our default branch is main".
_KEY_VALUE = re.compile(
    _OWNER
    + r"(?:(?i:new|current|latest|updated)\s+)?"
    + _KEY
    # "our error tracking runs on Sentry", "the user's savings are with Marcus".
    + r"\s+(?:is|are|runs on|run on|is hosted on|are hosted on|lives on)\s+"
    + r"(?:now\s+|currently\s+|still\s+)?(?:with\s+)?"
    + _PLANNED
    + rf"(?P<value>{_VALUE}{{1,60}})$",
)
#: "Carol changed her email to …", "the user updated their phone number to …": a key's new
#: value told by the change itself; the owner is the sentence's subject.
_KEY_CHANGED = re.compile(
    _SUBJECT
    # Not "moved": "moved her car to the garage" puts the car somewhere, its value stays.
    + r"(?i:has\s+|have\s+)?"
    # "switched dentists to Dr. Patel": a plural key, no possessive ("switched the editor to
    # light mode" sets a theme, not the editor).
    + r"(?:(?i:changed|updated|switched)\s+(?:(?i:his|her|their|my|our)\s+)?|"
    + rf"(?i:{_RAISED})\s+(?i:his|her|their|my|our|the|its)\s+)"
    + r"(?!(?i:the|its|a|an|from)\s)"
    + _KEY
    # "switched gyms from Planet Fitness to Equinox": the old value named on the way.
    + r"(?:\s+(?i:from)\s+(?P<old>[^,;]+?))?"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: "The landlord raised the user's rent to $1,550", "the client extended our deadline to
#: May 2": the owner's key changed by someone else (the owner is the possessive).
_KEY_CHANGED_BY = re.compile(
    r"^(?:(?i:the|a|our|my|his|her|their)\s+)?(?:[A-Za-z]+\s+){0,2}?(?i:has\s+|have\s+)?"
    + rf"(?i:changed|updated|moved|rescheduled|{_RAISED}|{_DEFERRED})\s+"
    + _OWNER.removeprefix("^")
    + _KEY
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: "The user's rent was raised to $2,100": the same change told of the key.
_KEY_CHANGED_PASSIVE = re.compile(
    _OWNER
    + _KEY
    + r"\s+(?i:was|were|has been|have been|got)\s+"
    + rf"(?i:changed|updated|switched|moved|renamed|{_RAISED}|{_DEFERRED})"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: "My phone number changed to …", "our rent increased to $2,100": the key's value changed,
#: told without an auxiliary. Read for keys that hold one value only ("my team switched to
#: Kotlin" changes what the team uses, not which team it is).
_KEY_CHANGED_ITSELF = re.compile(
    _OWNER
    + _KEY
    + r"\s+(?i:changed|switched|increased|decreased|rose|dropped|went up|went down)"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: A key said without an owner ("The upload limit is 10 MB", "Sprint planning moved to
#: Wednesdays"): the subject's own or their team's, read only for a key that holds one value.
_UNOWNED = r"^(?:(?i:the)\s+)?(?i:(?P<key>[a-z][a-z0-9 -]{1,40}?))"
_UNOWNED_KEY_VALUE = re.compile(
    _UNOWNED
    + r"\s+(?:now\s+)?(?:is|are|happens?|takes? place|(?:is|are) held)\s+(?:now\s+|currently\s+)?"
    + _PLANNED
    + rf"(?P<value>{_VALUE}{{1,60}})$"
)
#: "The staging database listens on port 5432", then "… was moved to port 5433": a thing's port.
_PORT = re.compile(
    _UNOWNED
    + r"\s+(?:now\s+)?(?:listens|runs|is running|is served|is|was moved|moved|has moved|"
    + r"was changed|(?:is|was) switched)\s+(?:now\s+)?(?:on|to)\s+port\s+(?P<value>\d{2,5})$"
)
#: "We moved the web app to port 8080": the same, told of whoever moved it.
_PORT_MOVED = re.compile(
    _SUBJECT
    + r"(?i:has\s+|have\s+)?(?i:moved|switched|changed)\s+(?:(?i:the|our|its)\s+)?"
    + _KEY
    + r"\s+(?i:to)\s+(?i:port)\s+(?P<value>\d{2,5})$"
)
#: "The project is licensed under MIT", then "… was relicensed under Apache 2.0".
_LICENSE = re.compile(
    _UNOWNED
    + r"\s+(?:is|was|has been|got|is now)\s+(?:re)?licensed\s+(?:under|as)\s+(?:the\s+)?"
    + rf"(?P<value>{_VALUE}{{1,40}}?)(?:\s+(?i:license|licence))?$"
)
#: "The payments service is owned by Priya", then "ownership of the payments service moved to
#: Dan" or "… was handed over to Dan": who owns a thing.
_OWNED_BY = re.compile(
    _UNOWNED + r"\s+(?:is|are)\s+(?:now\s+)?owned\s+by\s+(?P<value>(?-i:[A-Z])[\w'’.-]*(?:\s+"
    r"(?-i:[A-Z])[\w'’.-]*)?)$"
)
_OWNERSHIP_MOVED = re.compile(
    r"^(?i:ownership)\s+(?i:of)\s+(?:(?i:the)\s+)?(?i:(?P<key>[a-z][a-z0-9 -]{1,40}?))\s+"
    r"(?i:moved|was moved|passed|was passed|went|was transferred|was handed over|was handed)\s+"
    r"(?i:to)\s+(?P<value>(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)?)$"
)
#: Patterns whose key is the thing's, of one attribute: "the staging database" → its port.
_KEY_OF = {
    _PORT: "port",
    _PORT_MOVED: "port",
    _LICENSE: "license",
    _OWNED_BY: "owner",
    _OWNERSHIP_MOVED: "owner",
}
#: "… on Tuesdays instead of Fridays": the value left, said after the new one.
_INSTEAD = re.compile(r"\s+(?:instead of|rather than)\s+.*$", re.I)
_UNOWNED_KEY_CHANGED = re.compile(
    _UNOWNED
    + r"\s+(?:(?i:was|were|has been|have been|got)\s+)?"
    + rf"(?i:changed|switched|moved|renamed|rescheduled|{_DEFERRED}|pushed|{_RAISED}|increased|"
    + r"decreased|rose|dropped|went up|went down)"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$"
)
#: "The main branch is called master", then "we renamed the main branch to main": a thing's
#: name, one at a time.
_UNOWNED_CALLED = re.compile(
    _UNOWNED + r"\s+(?:is|are)\s+(?:now\s+)?(?:called|named)\s+" + rf"(?P<value>{_VALUE}{{1,60}})$"
)
_RENAMED = re.compile(
    _SUBJECT
    + r"(?i:has\s+|have\s+)?(?i:renamed)\s+(?i:the|our|my|his|her|their)\s+"
    + _KEY
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$"
)
#: "We moved the retro to 11am": an event's time changed by whoever holds it.
_RESCHEDULED = re.compile(
    _SUBJECT
    + r"(?i:has\s+|have\s+)?(?i:moved|rescheduled|pushed|pushed back|postponed|shifted)\s+"
    + r"(?:(?i:the|our|my|his|her|their)\s+)?"
    + _KEY
    + rf"\s+(?:(?i:back|forward|up)\s+)?(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$"
)
#: "The user has a new landlord, Ms. Ortiz", "I got a new doctor: Dr. Patel": a new holder.
_KEY_NEW = re.compile(
    _SUBJECT
    + r"(?i:has|have|got|found)\s+(?i:a)\s+(?i:new)\s+"
    + _KEY
    + rf"(?:\s*[,:]\s*|\s+(?i:named|called)\s+)(?P<value>{_VALUE}{{1,60}})$",
)
#: "Priya now reports to Elena": the manager, told by the reporting line.
_REPORTS_TO = re.compile(
    _SUBJECT
    + r"(?i:now\s+|currently\s+)?(?i:reports|reported)\s+(?i:directly\s+)?(?i:to)\s+"
    + r"(?P<value>(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)?)$",
)
#: "The user now goes by Bob": the name the subject is called by.
_GOES_BY = re.compile(
    _SUBJECT
    + r"(?i:now\s+)?(?i:goes|go)\s+(?i:by)\s+"
    + r"(?P<value>(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)?)$",
)
#: "We migrated the deploy target to Fly.io": a key's new value, told of the thing moved
#: (read only for a key that holds one value: "migrated the billing service to …" moves a
#: service, which the tool rules read).
_KEY_MIGRATED = re.compile(
    _SUBJECT
    + r"(?i:has\s+|have\s+)?(?i:migrated)\s+(?i:the|our|its|their)\s+"
    + _KEY
    + rf"\s+(?i:over\s+)?(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: "We switched the test runner from Jest to Vitest": a key's value, the old one named.
_KEY_SWITCHED_FROM = re.compile(
    _SUBJECT
    + r"(?i:has\s+|have\s+)?(?i:changed|switched|moved|migrated)\s+"
    # "moved deployments from Heroku to Fly.io": a plural key needs no determiner; "moved
    # over from …" names none.
    + r"(?:(?P<determiner>(?i:the|our|my|his|her|their)\s+)|(?!(?i:over|in|out|back|up|away|on)\s))"
    + _KEY
    + r"\s+(?i:from)\s+(?P<old>[^,;]+?)"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: A note, "Location: Berlin", "User's favorite color: blue": a key and its value, owned or not
#: (without an owner only a field's label: ``field_label``).
_NOTE = re.compile(
    r"^(?:(?P<owner>(?i:the user's|my|our)|(?P<name>[A-Z][a-z]+)(?:'s|’s))\s+)?"
    r"(?P<key>[A-Za-z][A-Za-z0-9 -]{1,40}?)\s*:\s*"
    rf"(?P<value>{_VALUE}{{1,60}})$"
)
#: "The user got a raise to $95,000": the salary, told by the raise.
_RAISE = re.compile(
    _SUBJECT
    + r"(?i:just\s+|recently\s+)?(?i:got|received|was given|negotiated)\s+(?i:a\s+)?"
    + r"(?i:pay\s+)?(?i:raise|pay rise|pay cut|salary bump)\s+(?i:to)\s+"
    + rf"(?P<value>{_VALUE}{{1,60}})$",
)
#: "The user takes 20 mg of lisinopril daily": the drug's dose, one at a time.
_DOSE = re.compile(
    _SUBJECT
    + r"(?i:now\s+|currently\s+)?(?i:takes|is taking|is on)\s+"
    + r"(?P<value>\d+(?:\.\d+)?\s?(?i:mg|mcg|g|ml|units|iu))\s+(?i:of)\s+"
    + r"(?P<drug>[A-Za-z][\w-]+)\b[^,;]*$",
)
#: "The user's doctor raised the sertraline dose to 100 mg": the owner's dose, changed by
#: whoever prescribes it.
_DOSE_CHANGED = re.compile(
    _OWNER
    + r"(?i:doctor|psychiatrist|physician|gp|vet|cardiologist|nurse practitioner)\s+"
    + rf"(?i:has\s+)?(?i:{_RAISED}|changed|adjusted)\s+(?i:the|my|his|her|their)\s+"
    + r"(?P<drug>[A-Za-z][\w-]+)\s+(?i:dose|dosage)\s+(?i:to)\s+"
    + r"(?P<value>\d+(?:\.\d+)?\s?(?i:mg|mcg|g|ml|units|iu))\b[^,;]*$",
)
#: Patterns that tell a key's value without naming the key.
_IMPLIED_KEYS = {_REPORTS_TO: "manager", _GOES_BY: "preferred name", _RAISE: "salary"}
#: A key may say what it is for: "the budget for the trip", "the deadline of the report".
#: And a word or two may say which one: "the monthly budget for groceries", "the weekly grocery
#: budget", "the work email" (another key than "the email": see ``same_key``).
_SINGLE_VALUED_KEYS = re.compile(
    rf"^(?:[a-z-]+\s+){{0,2}}{SINGLE_VALUED_KEYS}(?:\s+(?:for|of|on|at|in)\s+[a-z0-9 -]+)?$"
)
#: How often a key's value recurs, which a change may say in the value instead ("the monthly
#: budget is $400", then "cut the budget to $300 a month").
_PER = frozenset({"hourly", "daily", "weekly", "monthly", "yearly", "annual", "annually"})


def same_key(left: str, right: str) -> bool:
    """Whether two keys name the same thing: the same words, "for" and word order aside ("the
    monthly budget for groceries", "the grocery budget"), and a period on one side only is
    not another key ("hourly rate" and "daily rate" are two)."""
    if left == right:
        return True
    # "the eating-out budget" and "the budget for eating out": a hyphen joins the same words.
    left_words, right_words = words(left.replace("-", " ")), words(right.replace("-", " "))
    left_per, right_per = left_words & _PER, right_words & _PER
    if left_per and right_per and left_per != right_per:
        return False
    return bool(left_words - _PER) and left_words - _PER == right_words - _PER


#: "my team is like a second family", "our deploy day is great": a judgement, not a value
#: (lower-case words: a capitalised name such as "Hard Fork" is a value).
_EVALUATIVE = re.compile(
    r"^(?:like|so|such|very|really|pretty|quite|too|the best|the worst|a (?:great|big|huge)|"
    r"great|awesome|amazing|important|special|fun|cool|nice|good|bad|hard|tough|easy|"
    r"different|the same|always|never|still|not)\b"
)
#: "The user's cat is named Whiskers": the name is the value.
_NAMED = re.compile(r"^(?:named|called)\s+")
#: A value that is a time of the week or day: "at 9am", "on Mondays", "every Friday at noon".
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_WHEN = re.compile(
    r"^(?:(?:on|at|every)\s+)?(?:(?:the\s+)?(?:first|second|third|fourth|last)\s+)?"
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?:\s+of\s+(?:the|each|every)\s+month)?|"
    # A date: "December 15", "15 December", "the 15th".
    rf"{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}|"
    r"the\s+\d{1,2}(?:st|nd|rd|th)|"
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|midnight)"
    r"(?:\s+(?:at|and|on|every)\s+\S+)*$"
)
_WHEN_LEAD = re.compile(r"^(?:on|at)\s+")
_KEY_PATTERNS = (
    _RENAMED,
    _GOES_BY,
    _KEY_SWITCHED_FROM,
    _KEY_VALUE,
    _KEY_CHANGED,
    _KEY_CHANGED_PASSIVE,
    _KEY_CHANGED_ITSELF,
    _KEY_CHANGED_BY,
    _KEY_NEW,
    _REPORTS_TO,
    _RAISE,
    _DOSE,
    _DOSE_CHANGED,
    _PORT_MOVED,
    _KEY_MIGRATED,
)
#: Patterns read only for a key that holds one value (a key or an event's time).
_ONE_VALUE_ONLY = (
    _KEY_MIGRATED,
    _NOTE,
    _KEY_CHANGED_ITSELF,
    _KEY_CHANGED_BY,
    _UNOWNED_KEY_VALUE,
    _UNOWNED_KEY_CHANGED,
    _RESCHEDULED,
)
#: Keys that are health, which the health and condition rules read: "my wrist", "my cat allergy".
_HEALTH_KEY = re.compile(rf"^(?:(?:left |right )?(?:{BODY_PARTS})|(?:[a-z-]+ ){{0,2}}allergy)$")
#: The entity of a key said without an owner.
UNOWNED = "*"
#: "The weekly sync", "our standup meeting": an event named with how often and what it is.
_EVENT_KEY = re.compile(
    r"^(?:(?:daily|weekly|biweekly|monthly|regular|usual|team)\s+)*(?P<event>.+?)"
    r"(?:\s+(?:meeting|call|session))?$"
)
_CHANGED = re.compile(r"\b(?:is now|are now|changed|switched|no longer)\b", re.I)


#: Where a piece of work stands, one status at a time: "the payments PR is in review", then
#: "… was merged"; "bug 4512 is open", then "… was fixed in 2.3"; "the deploy is blocked on the
#: security review", then "… is no longer blocked".
_STATUS = (
    r"open|closed|merged|in review|under review|in progress|blocked|unblocked|done|finished|"
    r"complete|completed|pending|deployed|live|released|shipped|fixed|resolved|approved|"
    r"rejected|cancell?ed|on hold|paused|a draft|draft|ready|reopened|failing|passing|broken"
)
_STATUS_IS = re.compile(
    _UNOWNED
    + r"\s+(?i:is|are)\s+(?i:now\s+|still\s+|currently\s+)?(?P<negated>(?i:no longer|not)\s+)?"
    + rf"(?P<status>(?i:{_STATUS}))(?:\s+(?i:on|by|for|in|until|pending)\b.*)?$"
)
_STATUS_CHANGED = re.compile(
    _UNOWNED
    + r"\s+(?i:was|were|has been|have been|got)\s+(?i:finally\s+|just\s+|now\s+)?"
    + r"(?P<status>(?i:merged|fixed|closed|resolved|deployed|approved|rejected|shipped|reopened|"
    + r"cancell?ed|released|completed|finished|blocked|unblocked|paused))\b(?:\s+.*)?$"
)
#: "Ticket OPS-88 is assigned to Maria", then "… was reassigned to Dev".
_ASSIGNED = re.compile(
    _UNOWNED
    + r"\s+(?i:is|was|has been)\s+(?i:now\s+)?(?i:re)?(?i:assigned)\s+(?i:to)\s+"
    + r"(?P<value>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?)$"
)
_STATUS_ALIASES = {
    "under review": "in review",
    "canceled": "cancelled",
    "a draft": "draft",
    "complete": "done",
    "completed": "done",
    "finished": "done",
}
#: Who or what a status is never read of: a person's state is not a piece of work's.
_NOT_WORK = frozenset({"user", "i", "we", "team", "you", "he", "she", "they", "it", "this", "that"})


def _work_status(parts: tuple[str, ...], speaker: str | None) -> list[tuple[str, Finding]]:
    """A piece of work's status or assignee (see :data:`_STATUS_IS`), as ``(entity, finding)``."""
    for stated in parts:
        for pattern in (_STATUS_IS, _STATUS_CHANGED, _ASSIGNED):
            match = pattern.match(stated)
            if match is None:
                continue
            thing = match.group("key").strip().lower().removeprefix("the ")
            if thing in _NOT_WORK or thing.split()[0] in _NOT_WORK:
                return []
            if pattern is _ASSIGNED:
                return [
                    (
                        speaker or UNOWNED,
                        Finding(f"key:assignee of {thing}", match["value"].lower()),
                    )
                ]
            status = _STATUS_ALIASES.get(match["status"].lower(), match["status"].lower())
            if pattern is _STATUS_IS and match.group("negated"):
                status = "unblocked" if status == "blocked" else f"not {status}"
            return [(speaker or UNOWNED, Finding(f"key:status of {thing}", status))]
    return []


def key_values(sentence: str, speaker: str | None) -> list[tuple[str, Finding]]:
    """The key a sentence gives a value, as ``(entity, finding)``: ``key:<key>`` for a key that
    holds one value, ``held:<key>`` (its words as the topic) for one that may hold several."""
    parts = (sentence.strip().rstrip(".!"), *opened_parts(sentence))
    if not unsettled(sentence) and (status := _work_status(parts, speaker)):
        return status
    match = next(
        (
            found
            for stated in parts
            for pattern in _KEY_PATTERNS
            if (found := pattern.match(stated))
        ),
        None,
    ) or next(
        (
            found
            for stated in parts
            for pattern in (
                _PORT,
                _LICENSE,
                _OWNED_BY,
                _OWNERSHIP_MOVED,
                _UNOWNED_CALLED,
                _UNOWNED_KEY_VALUE,
                _UNOWNED_KEY_CHANGED,
                _RESCHEDULED,
                _NOTE,
            )
            if (found := pattern.match(stated))
        ),
        None,
    )
    if match is None or unsettled(sentence):
        return []
    implied = _IMPLIED_KEYS.get(match.re)
    if match.re in (_DOSE, _DOSE_CHANGED):
        implied = f"{match.group('drug').lower()} dose"
    key = implied or match.group("key").strip().lower()
    if _HEALTH_KEY.match(key):
        return []  # "my wrist is fine now" tells of health, not of a thing held
    if match.re in _KEY_OF:
        key = f"{key} {_KEY_OF[match.re]}"
    if match.re in (_UNOWNED_CALLED, _RENAMED):
        key = f"name of {key}"  # a thing's name holds one value
    if not _SINGLE_VALUED_KEYS.match(key) and _SINGLE_VALUED_KEYS.match(key.removesuffix("s")):
        key = key.removesuffix("s")
    # An event's time is one at a time: "the user's daily standup is at 9am", then "… was
    # moved to 10am" (read before the value is cut, which ends a value at a time phrase).
    when = _WHEN.match(_INSTEAD.sub("", match.group("value")).strip().rstrip(".").lower())
    if when:
        value = _WHEN_LEAD.sub("", when.group(0))
    else:
        versioned = _VERSIONED_VALUE.match(match.group("value").strip())
        raw = versioned.group("value") if versioned else value_text(match.group("value"))
        value = _NAMED.sub("", raw.lower())
    if when is not None:
        key = _EVENT_KEY.sub(r"\g<event>", key)
    elif match.re is _RESCHEDULED:
        return []  # "moved her car to the garage" puts the car somewhere
    one_at_a_time = bool(_SINGLE_VALUED_KEYS.match(key)) or when is not None
    # "moved deployments from Heroku to Fly.io" leaves Heroku: the key held one value ("moved
    # the billing service from …" moves a thing, which the tool rules read).
    left_one = match.re is _KEY_SWITCHED_FROM and not match.group("determiner")
    single_valued = one_at_a_time or left_one or bool(_CHANGED.search(sentence))
    if (not single_valued and match.re is not _KEY_VALUE) or (
        match.re in _ONE_VALUE_ONLY and not one_at_a_time
    ):
        return []
    if match.re is _NOTE and match.group("owner") is None:
        # "Location: Berlin": a field of whoever the memory is about, as a key said without an
        # owner; "Therapist: How are you feeling?" is someone speaking.
        if not field_label(match.group("key")):
            return []
        return [(speaker or UNOWNED, Finding(f"key:{key}", value))]
    if "owner" not in match.re.groupindex:
        # In a conversation the speaker's ("Ana: the game is at 7pm"): two speakers may speak
        # of two games.
        return [(speaker or UNOWNED, Finding(f"key:{key}", value))]
    owner = match.group("owner").lower().removesuffix("'s").removesuffix("’s")
    entity = {"the user": "user", "the team": "team", "our": "team", "we": "team"}.get(owner)
    if owner.startswith("the ") and owner[4:] in THINGS:
        entity = THINGS[owner[4:]]
    if owner in ("my", "i"):
        entity = speaker or WRITER
    elif match.group("name"):
        entity = match.group("name").lower()
    # Read as written: "Hard Fork" names a podcast, "hard to say" judges.
    if entity is None or not value or _EVALUATIVE.match(match.group("value").strip()):
        return []
    if not single_valued:
        # "The user's bank is Chase": a key that may hold several values at once, so another
        # value replaces nothing; only a statement that ends this one does ("closed the Chase
        # account").
        return [(entity, Finding(f"{HELD}:{key}", HOLDS, words(value)))]
    # "switched banks from Chase to Ally": the value left, which ends what an older memory
    # said in other words ("banks with Chase").
    replaced = match.groupdict().get("old") or ""
    return [(entity, Finding(f"key:{key}", value, replaced=value_text(replaced).lower()))]
