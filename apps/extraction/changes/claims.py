"""A memory's claims: each clause's findings, attributed to the clause's subject."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from apps.extraction.changes.patterns import (
    ACTIVE,
    ALIVE,
    HELD,
    HOLDS,
    PLATFORM,
    PLATFORM_NAME,
    STOPPED,
    SWITCHED,
    Finding,
    findings,
    owned_counts,
    phrases,
    unsettled,
    value_text,
    words,
)
from apps.extraction.changes.text import (
    THING_NAMES,
    THINGS,
    WRITER,
    Clause,
    clauses,
    memory_sentences,
    opened_parts,
    speaker_and_body,
)


@dataclass(frozen=True)
class Claim:
    """One statement of an attribute of an entity, as a memory makes it."""

    entity: str
    attribute: str
    value: str
    #: Topical attributes (activity, result, decision): the topic's content words.
    topic: frozenset[str] = field(default_factory=frozenset)
    #: The value the statement says it replaced ("switched from Poetry to uv": "poetry").
    replaced: str = ""
    #: The head noun of a topical claim ("a design internship": "internship").
    head: str = ""
    #: Which sentence of the memory makes it (see :func:`claim_share`).
    sentence: int = 0
    #: Told as what holds now ("now teaches guitar"), against what held before.
    now: bool = False

    @property
    def family(self) -> str:
        """The attribute without its qualifier: ``pets``, ``health``, ``tool``, …"""
        return self.attribute.split(":", 1)[0]


#: One value: no clause punctuation, but a dot inside it (an address, a version), a title's
#: ("Mr. Green", "Dr. Kim") and a thousands comma ("$2,100").
_VALUE = r"(?:[^,;.!?()]|\.(?=\S)|(?:(?<=Mr)|(?<=Ms)|(?<=Dr)|(?<=St)|(?<=Mrs))\.\s|,(?=\d{3}\b))"
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
#: "my favourite colour is blue", "Andrew's manager is Rita", "our default branch is main".
_KEY_VALUE = re.compile(
    _OWNER
    + r"(?:(?i:new|current|latest|updated)\s+)?"
    + _KEY
    + r"\s+(?:is|are)\s+(?:now\s+|currently\s+|still\s+)?"
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
    + r"(?!(?i:the|its|a|an)\s)"
    + _KEY
    # "switched gyms from Planet Fitness to Equinox": the old value named on the way.
    + r"(?:\s+(?i:from)\s+[^,;]+?)?"
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$",
)
#: "The user's rent was raised to $2,100": the same change told of the key.
_KEY_CHANGED_PASSIVE = re.compile(
    _OWNER
    + _KEY
    + rf"\s+(?i:was|were|has been|have been|got)\s+(?i:changed|updated|switched|moved|{_RAISED})"
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
    _UNOWNED + r"\s+(?:is|are)\s+(?:now\s+|currently\s+)?" + rf"(?P<value>{_VALUE}{{1,60}})$"
)
_UNOWNED_KEY_CHANGED = re.compile(
    _UNOWNED
    + r"\s+(?:(?i:was|were|has been|have been|got)\s+)?"
    + rf"(?i:changed|switched|moved|rescheduled|pushed back|pushed|{_RAISED}|increased|"
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
    + r"(?i:the|our|my|his|her|their)\s+"
    + _KEY
    + rf"\s+(?i:to)\s+(?P<value>{_VALUE}{{1,60}})$"
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
#: "We rewrote the API in FastAPI", "the team migrated the database to PostgreSQL 15".
#: "We migrated the frontend from Angular to React", "we moved CI from Jenkins to GitHub
#: Actions", "we moved the billing service to CockroachDB": the thing keeps its kind.
_REBUILT = re.compile(
    r"^(?i:we|i|the team|our team)\s+(?i:have\s+|has\s+)?"
    r"(?i:rewrote|rewritten|migrated|moved|ported|switched|converted|rebuilt)\s+"
    rf"(?:(?i:the|our)\s+)?(?P<kind>(?:[a-z][\w-]*\s+){{0,2}}?)(?P<thing>(?i:{THING_NAMES}))\s+"
    r"(?:(?i:from)\s+(?P<old>[^,;]+?)\s+)?(?i:over\s+)?(?i:to|in|into|onto|on)\s+" + PLATFORM_NAME
)
_THING_ENTITIES = frozenset(THINGS.values())
#: Patterns that tell a key's value without naming the key.
_IMPLIED_KEYS = {_REPORTS_TO: "manager"}
#: Keys whose value is one thing at a time: a new value replaces the old one.
SINGLE_VALUED_KEYS = (
    r"(?:favou?rite [a-z ]+|birthday|age|e-?mail(?: address)?|phone(?: number)?|address|"
    r"home address|time ?zone|manager|boss|job title|title|salary|budget|deadline|"
    r"default branch|port|version|editor|ide|shell|operating system|os|main language|"
    r"primary language|database|stack|department|rent|car|commute|school|major|gym|doctor|"
    r"therapist|hometown|home town|partner|girlfriend|boyfriend|wife|husband|name|nickname|"
    r"username|handle|pronouns|employer|company|city|country|relationship status|landlord|"
    r"dentist|(?:hourly |daily |monthly )?rate|price|fee|"
    # "the upload size limit", "the API rate limit", "the session timeout", "the max file
    # size", "the default region".
    r"(?:[a-z-]+ ){0,2}(?:limit|quota|timeout|threshold)|"
    r"(?:max|maximum|min|minimum|default)(?: [a-z-]+){1,2})"
)
#: A key may say what it is for: "the budget for the trip", "the deadline of the report".
_SINGLE_VALUED_KEYS = re.compile(
    rf"^{SINGLE_VALUED_KEYS}(?:\s+(?:for|of|on|at|in)\s+[a-z0-9 -]+)?$"
)
#: "my team is like a second family", "our deploy day is great": a judgement, not a value.
_EVALUATIVE = re.compile(
    r"^(?:like|so|such|very|really|pretty|quite|too|the best|the worst|a (?:great|big|huge)|"
    r"great|awesome|amazing|important|special|fun|cool|nice|good|bad|hard|tough|easy|"
    r"different|the same|always|never|still|not)\b"
)
#: "The user's cat is named Whiskers": the name is the value.
_NAMED = re.compile(r"^(?:named|called)\s+")
#: "a parrot named Kiwi", "the user's cat is named Whiskers": someone a memory names, alive
#: until a later memory says they died.
_NAMED_BEING = re.compile(
    r"\b(?:named|called)\s+(?P<names>[A-Z][a-z]+(?:(?:,\s*(?:and\s+)?|\s+and\s+)[A-Z][a-z]+)*)\b"
)
#: "Bob replaced Alice as project manager", "Lucia took over from Omar as team lead": one
#: holder's end and the next one's start.
_REPLACED_AS = re.compile(
    r"^(?P<new>[A-Z][a-z]+)\s+(?:(?:has\s+)?replaced|succeeded|took over from)\s+"
    r"(?P<old>[A-Z][a-z]+)\s+as\s+(?:the\s+|our\s+|their\s+)?(?P<topic>[^,;]+)$"
)
#: A value that is a time of the week or day: "at 9am", "on Mondays", "every Friday at noon".
_WHEN = re.compile(
    r"^(?:(?:on|at|every)\s+)?(?:(?:the\s+)?(?:first|second|third|fourth|last)\s+)?"
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?:\s+of\s+(?:the|each|every)\s+month)?|"
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|midnight)"
    r"(?:\s+(?:at|and|on|every)\s+\S+)*$"
)
_WHEN_LEAD = re.compile(r"^(?:on|at)\s+")
_KEY_PATTERNS = (
    _RENAMED,
    _KEY_VALUE,
    _KEY_CHANGED,
    _KEY_CHANGED_PASSIVE,
    _KEY_CHANGED_ITSELF,
    _KEY_NEW,
    _REPORTS_TO,
)
#: Patterns read only for a key that holds one value (a key or an event's time).
_ONE_VALUE_ONLY = (_KEY_CHANGED_ITSELF, _UNOWNED_KEY_VALUE, _UNOWNED_KEY_CHANGED, _RESCHEDULED)
#: The entity of a key said without an owner.
UNOWNED = "*"
#: "The weekly sync", "our standup meeting": an event named with how often and what it is.
_EVENT_KEY = re.compile(
    r"^(?:(?:daily|weekly|biweekly|monthly|regular|usual|team)\s+)*(?P<event>.+?)"
    r"(?:\s+(?:meeting|call|session))?$"
)
_CHANGED = re.compile(r"\b(?:is now|are now|changed|switched|no longer)\b", re.I)


def _key_values(sentence: str, speaker: str | None, number: int) -> list[Claim]:
    parts = (sentence.strip().rstrip(".!"), *opened_parts(sentence))
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
            for pattern in (_UNOWNED_CALLED, _UNOWNED_KEY_VALUE, _UNOWNED_KEY_CHANGED, _RESCHEDULED)
            if (found := pattern.match(stated[:1].lower() + stated[1:]))
        ),
        None,
    )
    if match is None or unsettled(sentence):
        return []
    implied = _IMPLIED_KEYS.get(match.re)
    key = implied or match.group("key").strip().lower()
    if match.re in (_UNOWNED_CALLED, _RENAMED):
        key = f"name of {key}"  # a thing's name holds one value
    if not _SINGLE_VALUED_KEYS.match(key) and _SINGLE_VALUED_KEYS.match(key.removesuffix("s")):
        key = key.removesuffix("s")
    # An event's time is one at a time: "the user's daily standup is at 9am", then "… was
    # moved to 10am" (read before the value is cut, which ends a value at a time phrase).
    when = _WHEN.match(match.group("value").strip().rstrip(".").lower())
    if when:
        value = _WHEN_LEAD.sub("", when.group(0))
    else:
        value = _NAMED.sub("", value_text(match.group("value")).lower())
    if when is not None:
        key = _EVENT_KEY.sub(r"\g<event>", key)
    elif match.re is _RESCHEDULED:
        return []  # "moved her car to the garage" puts the car somewhere
    one_at_a_time = bool(_SINGLE_VALUED_KEYS.match(key)) or when is not None
    single_valued = one_at_a_time or bool(_CHANGED.search(sentence))
    if (not single_valued and match.re is not _KEY_VALUE) or (
        match.re in _ONE_VALUE_ONLY and not one_at_a_time
    ):
        return []
    if "owner" not in match.re.groupindex:
        # In a conversation the speaker's ("Ana: the game is at 7pm"): two speakers may speak
        # of two games.
        entity = speaker or UNOWNED
        return [Claim(entity=entity, attribute=f"key:{key}", value=value, sentence=number)]
    owner = match.group("owner").lower().removesuffix("'s").removesuffix("’s")
    entity = {"the user": "user", "the team": "team", "our": "team", "we": "team"}.get(owner)
    if owner.startswith("the ") and owner[4:] in THINGS:
        entity = THINGS[owner[4:]]
    if owner in ("my", "i"):
        entity = speaker or WRITER
    elif match.group("name"):
        entity = match.group("name").lower()
    if entity is None or not value or _EVALUATIVE.match(value):
        return []
    if not single_valued:
        # "The user's bank is Chase": a key that may hold several values at once, so another
        # value replaces nothing; only a statement that ends this one does ("closed the Chase
        # account").
        return [
            Claim(
                entity=entity,
                attribute=f"{HELD}:{key}",
                value=HOLDS,
                topic=words(value),
                sentence=number,
            )
        ]
    return [Claim(entity=entity, attribute=f"key:{key}", value=value, sentence=number)]


def extract_claims(text: str) -> list[Claim]:
    """Every claim ``text`` makes (see the package docstring), in sentence order."""
    return list(_claims_of(text))


#: Recent texts' claims per process: the change detector compares each write with the same
#: candidate memories write after write, and recall asks the same memories again and again.
_CLAIMS_CACHE_SIZE = 20_000


@functools.lru_cache(maxsize=_CLAIMS_CACHE_SIZE)
def _claims_of(text: str) -> tuple[Claim, ...]:
    speaker, _body = speaker_and_body(text)
    found: list[Claim] = []
    subjects: dict[int, str] = {}
    for clause in clauses(text):
        subjects.setdefault(clause.sentence, clause.entity)
        found.extend(_clause_claims(clause, findings(clause.predicate)))
    for number, sentence in enumerate(memory_sentences(text)):
        if unsettled(sentence):
            continue
        for owner, finding in owned_counts(
            sentence, subject=subjects.get(number), speaker=speaker or WRITER
        ):
            claim = Claim(
                entity=owner, attribute=finding.attribute, value=finding.value, sentence=number
            )
            if claim not in found:
                found.append(claim)
        keyed = _key_values(sentence, speaker, number)
        if keyed:
            # "Carol changed her email to …" names its key: the switch of a kind says less.
            found = [c for c in found if c.sentence != number or c.family != SWITCHED]
        found.extend(keyed)
        found.extend(_handovers(sentence, number))
        found.extend(_replatformed(sentence, number))
    return tuple(found)


def phrase_claims(text: str) -> list[Claim]:
    """What each clause of ``text`` says of a kind of thing (:func:`~.patterns.phrases`), for
    comparing with a newer memory's switch ("works night shifts" / "switched to day
    shifts"); not part of :func:`extract_claims`, which says what a memory states."""
    found: list[Claim] = []
    for clause in clauses(text):
        found.extend(_clause_claims(clause, phrases(clause.predicate)))
    return found


def _clause_claims(clause: Clause, found: list[Finding]) -> list[Claim]:
    """A clause's findings as claims of its subject (a platform only of a project's thing)."""
    if clause.entity.split()[-1] not in _THING_ENTITIES:
        found = [finding for finding in found if finding.attribute != PLATFORM]
    return [
        Claim(
            entity=clause.entity,
            attribute=finding.attribute,
            value=finding.value,
            topic=finding.topic,
            replaced=finding.replaced,
            head=finding.head,
            sentence=clause.sentence,
            now=finding.now,
        )
        for finding in found
    ]


def _replatformed(sentence: str, number: int) -> list[Claim]:
    """ "We rewrote the API in FastAPI": the thing's platform, told of its makers."""
    match = _REBUILT.match(sentence.strip().rstrip(".!"))
    if match is None or unsettled(sentence):
        return []
    value = match.group("value").rstrip(".").lower()
    thing = f"{match.group('kind').lower()}{THINGS[match.group('thing').lower()]}"
    replaced = (match.group("old") or "").lower()
    return [Claim(thing, PLATFORM, value, replaced=replaced, sentence=number)]


def living_claims(text: str) -> list[Claim]:
    """Who ``text`` names as living ("The user has a parrot named Kiwi": Kiwi), for comparing
    with a newer memory's death; not part of :func:`extract_claims`, which would search for
    every memory that names someone."""
    return [
        Claim(name.lower(), ALIVE, ALIVE, sentence=number)
        for number, sentence in enumerate(memory_sentences(text))
        if not unsettled(sentence)
        for match in _NAMED_BEING.finditer(sentence)
        for name in re.split(r",\s*(?:and\s+)?|\s+and\s+", match.group("names"))
    ]


def _handovers(sentence: str, number: int) -> list[Claim]:
    """ "Bob replaced Alice as project manager": Alice no longer holds it, Bob does."""
    match = _REPLACED_AS.match(sentence.strip().rstrip(".!"))
    if match is None or unsettled(sentence):
        return []
    topic = words(value_text(match.group("topic")))
    if not topic:
        return []
    return [
        Claim(match.group("old").lower(), "activity", STOPPED, topic=topic, sentence=number),
        Claim(match.group("new").lower(), "activity", ACTIVE, topic=topic, sentence=number),
    ]


def informative_sentences(text: str) -> int:
    """How many sentences of ``text`` say something (three content words or more)."""
    return sum(1 for sentence in memory_sentences(text) if len(words(sentence)) >= 3)


def claim_share(text: str, claims: list[Claim]) -> float:
    """The share of the memory's informative sentences that make one of ``claims``: 1.0 for
    a memory that states only that, less for one that says other things too."""
    total = informative_sentences(text)
    if total == 0:
        return 1.0
    return min(1.0, len({claim.sentence for claim in claims}) / total)


@functools.lru_cache(maxsize=_CLAIMS_CACHE_SIZE)
def _stated(text: str) -> frozenset[tuple[str, str]]:
    """``text``'s stated attributes as ``(entity, family)`` pairs, which recall asks of the
    same memories again and again."""
    return frozenset((claim.entity, claim.family) for claim in _claims_of(text))


def states_attribute(text: str, families: frozenset[str], entities: frozenset[str]) -> bool:
    """Whether ``text`` states one of the attribute ``families`` of one of ``entities`` (of
    anyone, if empty): "Maria works as a nurse" states ``employer`` of ``maria``."""
    return any(
        family in families and (not entities or entity in entities)
        for entity, family in _stated(text)
    )
