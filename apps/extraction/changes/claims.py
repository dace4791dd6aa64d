"""A memory's claims: each clause's findings, attributed to the clause's subject."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from apps.extraction.changes.keys import key_values
from apps.extraction.changes.patterns import (
    ACTIVE,
    ALIVE,
    DEAD,
    PLATFORM,
    PLATFORM_NAME,
    STOPPED,
    SWITCHED,
    Finding,
    findings,
    frames,
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
    is_name,
    memory_sentences,
    speaker_and_body,
)
from apps.extraction.referents import plain_names


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
    #: The weekdays a routine is kept on ("goes to the gym on Mondays and Thursdays").
    days: frozenset[str] = field(default_factory=frozenset)

    @property
    def family(self) -> str:
        """The attribute without its qualifier: ``pets``, ``health``, ``tool``, …"""
        return self.attribute.split(":", 1)[0]


#: "We rewrote the API in FastAPI", "we migrated the frontend from Angular to React", "we moved
#: the billing service to CockroachDB": what a project's thing runs on, told of its makers (the
#: thing keeps its kind).
_REBUILT = re.compile(
    r"^(?i:we|i|the team|our team)\s+(?i:have\s+|has\s+)?"
    r"(?i:rewrote|rewritten|migrated|moved|ported|switched|converted|rebuilt)\s+"
    rf"(?:(?i:the|our)\s+)?(?P<kind>(?:[a-z][\w-]*\s+){{0,2}}?)(?P<thing>(?i:{THING_NAMES}))\s+"
    r"(?:(?i:from)\s+(?P<old>[^,;]+?)\s+)?(?i:over\s+)?(?i:to|in|into|onto|on)\s+" + PLATFORM_NAME
)
_THING_ENTITIES = frozenset(THINGS.values())
#: "a parrot named Kiwi", "the user's cat is named Whiskers": someone a memory names, alive
#: until a later memory says they died.
_NAMED_BEING = re.compile(
    r"\b(?:named|called)\s+(?P<names>[A-Z][a-z]+(?:(?:,\s*(?:and\s+)?|\s+and\s+)[A-Z][a-z]+)*)\b"
)
#: "We had to put Max down", "the vet put Kiwi to sleep": the one named died.
_PUT_DOWN = re.compile(
    r"\b(?:put|had to put|have to put|decided to put)\s+(?P<name>[A-Z][a-z]+)\s+"
    r"(?:down|to sleep)\b"
)
#: "Bob replaced Alice as project manager", "Lucia took over from Omar as team lead": one
#: holder's end and the next one's start.
_REPLACED_AS = re.compile(
    r"^(?P<new>[A-Z][a-z]+)\s+(?:(?:has\s+)?replaced|succeeded|took over from)\s+"
    r"(?P<old>[A-Z][a-z]+)\s+as\s+(?:the\s+|our\s+|their\s+)?(?P<topic>[^,;]+)$"
)


def extract_claims(text: str) -> list[Claim]:
    """Every claim ``text`` makes (see the package docstring), in sentence order."""
    return list(_claims_of(text))


#: Recent texts' claims per process: the change detector compares each write with the same
#: candidate memories write after write, and recall asks the same memories again and again.
_CLAIMS_CACHE_SIZE = 20_000


@functools.lru_cache(maxsize=_CLAIMS_CACHE_SIZE)
def _claims_of(text: str) -> tuple[Claim, ...]:
    text = plain_names(text)
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
        keyed = [
            Claim(
                entity,
                finding.attribute,
                finding.value,
                finding.topic,
                replaced=finding.replaced,
                sentence=number,
            )
            for entity, finding in key_values(sentence, speaker)
        ]
        if keyed:
            # "Carol changed her email to …" names its key: the switch of a kind says less.
            found = [c for c in found if c.sentence != number or c.family != SWITCHED]
        found.extend(keyed)
        found.extend(_handovers(sentence, number))
        found.extend(_put_down(sentence, number))
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


def frame_claims(text: str) -> list[Claim]:
    """What each clause's verb says ``text``'s subject does (:func:`~.patterns.frames`), for
    comparing with a newer memory's "now"; not part of :func:`extract_claims`."""
    found: list[Claim] = []
    for clause in clauses(text):
        found.extend(_clause_claims(clause, frames(clause.predicate)))
    return found


#: What a "we" changes of the writer's own household: "we bought a house", "we moved to
#: Denver", "we adopted a cat" (a team's tools and decisions stay the team's).
_HOUSEHOLD_FAMILIES = frozenset({"residence", "home", "household", "pets"})
_HOUSEHOLD_KEYS = frozenset({"key:children"})


def _of_the_household(finding: Finding) -> bool:
    return (
        finding.attribute in _HOUSEHOLD_KEYS
        or finding.attribute.split(":", 1)[0] in _HOUSEHOLD_FAMILIES
    )


def _clause_claims(clause: Clause, found: list[Finding]) -> list[Claim]:
    """A clause's findings as claims of its subject (a platform only of a project's thing;
    of a "we" said for its speaker, a household change only)."""
    if clause.entity.split()[-1] not in _THING_ENTITIES:
        found = [finding for finding in found if finding.attribute != PLATFORM]
    if clause.household_only:
        found = [finding for finding in found if _of_the_household(finding)]
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
            days=finding.days,
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
    return [Claim(thing, PLATFORM, value, replaced=replaced, sentence=number, now=True)]


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


def _put_down(sentence: str, number: int) -> list[Claim]:
    """ "We had to put Max down last week": Max died, told of whoever put them down."""
    if unsettled(sentence):
        return []
    return [
        Claim(match.group("name").lower(), ALIVE, DEAD, sentence=number)
        for match in _PUT_DOWN.finditer(sentence)
        if is_name(match.group("name"))
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
