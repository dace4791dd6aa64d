"""Named pets and people a later statement mentions by name alone.

"The user has a golden retriever named Biscuit" is said once; months later "Biscuit died last
week" is said without saying who Biscuit is. Kept as it is, that memory answers neither "Does
the user have a dog?" nor any question about the user: it names no one the question does. A
statement that names a pet or a person an earlier statement introduced ("a golden retriever
named Biscuit", "the user's friend Sam", "Toby, Andrew's puppy") is rewritten to say whose
and what the name is: "The user's golden retriever Biscuit died last week."

Only introductions whose kind is a pet or a relation count (a dog, a cat, a friend, a sister),
each with its owner: the user, or a person a conversation names ("Andrew adopted a puppy named
Toby"). "Caroline met a woman named Sarah" introduces no one: a woman is nobody's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# fmt: off
#: The last word of a kind that makes a name someone's: pets (breeds included) and relations.
_KINDS = frozenset((
    "dog", "dogs", "puppy", "pup", "cat", "kitten", "kitty", "turtle", "tortoise", "bird",
    "parrot", "budgie", "rabbit", "bunny", "hamster", "guinea", "pig", "horse", "pony", "fish",
    "goldfish", "snake", "lizard", "gecko", "ferret", "pet", "retriever", "labrador", "lab",
    "poodle", "terrier", "beagle", "shepherd", "bulldog", "husky", "corgi", "dachshund",
    "spaniel", "collie", "pug", "chihuahua", "boxer", "rottweiler", "greyhound", "doodle",
    "friend", "bestie", "brother", "sister", "sibling", "son", "daughter", "kid", "child",
    "baby", "cousin", "aunt", "uncle", "niece", "nephew", "grandma", "grandmother", "grandpa",
    "grandfather", "mother", "mom", "father", "dad", "husband", "wife", "partner", "spouse",
    "girlfriend", "boyfriend", "fiance", "fiancé", "fiancee", "fiancée", "roommate",
    "flatmate", "neighbor", "neighbour", "coworker", "colleague", "boss", "manager", "mentor",
    "therapist", "doctor", "coach", "tutor", "teammate", "classmate", "landlord",
))
# fmt: on
_NAME = r"[A-Z][a-z][\w'’-]*"
_KIND = r"(?:[a-z][\w-]* ){0,2}[a-z][\w-]*"
#: "The user has a golden retriever named Biscuit", "Andrew adopted a puppy called Toby":
#: the owner opens the statement, the name follows "named" or "called".
_INTRODUCED = re.compile(
    rf"^(?P<owner>[Tt]he user|{_NAME})\b[^.;!?]*?\b(?:a|an|the|their|his|her|one|another)\s+"
    rf"(?P<kind>{_KIND})\s+(?:named|called)\s+(?P<name>{_NAME})"
)
#: "the user's friend Sam", "Andrew's puppy Toby": a name with its owner and kind before it.
_APPOSED = re.compile(
    rf"\b(?P<owner>[Tt]he user|{_NAME})['’]s\s+(?P<kind>{_KIND})\s+(?P<name>{_NAME})"
)
#: "meet Toby, Andrew's puppy": the owner and kind after the name, the kind ending at the
#: first word that names one (what follows is the sentence's: "Toby, Andrew's puppy, loves…").
_KIND_WORDS = "|".join(sorted(_KINDS, key=len, reverse=True))
_APPOSED_AFTER = re.compile(
    rf"\b(?P<name>{_NAME}),\s+(?P<owner>[Tt]he user|{_NAME})['’]s\s+"
    rf"(?P<kind>(?:[a-z][\w-]* ){{0,2}}?(?:{_KIND_WORDS}))\b"
)
_INTRODUCTIONS = (_INTRODUCED, _APPOSED, _APPOSED_AFTER)


@dataclass(frozen=True)
class NamedReferent:
    """A name and what it is: ``owner``'s ``kind`` (owner "the user", or a person's name)."""

    name: str
    kind: str
    owner: str

    @property
    def described(self) -> str:
        """ "the user's golden retriever Biscuit"."""
        return f"{self.owner}'s {self.kind} {self.name}"


#: Names that are also a date's words: a cat named May must not turn "in May 2025" into a cat.
# fmt: off
_CALENDAR = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
))
# fmt: on


def _referent(match: re.Match[str]) -> NamedReferent | None:
    kind = match["kind"].lower()
    if kind.split()[-1] not in _KINDS or match["name"].lower() in _CALENDAR:
        return None
    owner = "the user" if match["owner"].lower() == "the user" else match["owner"]
    if owner == match["name"]:
        return None
    return NamedReferent(name=match["name"], kind=kind, owner=owner)


def named_referents(texts: Iterable[str]) -> dict[str, NamedReferent]:
    """The names ``texts`` introduce as someone's pet or relation, by name. Left out: a name
    introduced as two different things (two people called Sam), which is ambiguous, and a name
    that owns a referent itself (a conversation's speakers: "Caroline's friend Melanie" would
    otherwise be written into everything Melanie says)."""
    found: dict[str, NamedReferent] = {}
    ambiguous: set[str] = set()
    for text in texts:
        for pattern in _INTRODUCTIONS:
            for match in pattern.finditer(text):
                referent = _referent(match)
                if referent is None:
                    continue
                known = found.setdefault(referent.name, referent)
                if (known.kind, known.owner) != (referent.kind, referent.owner):
                    ambiguous.add(referent.name)
    owners = {referent.owner for referent in found.values()}
    return {
        name: referent
        for name, referent in found.items()
        if name not in ambiguous and name not in owners
    }


def mentioned_names(text: str) -> set[str]:
    """Capitalised words of ``text`` that may be names (a referent's lookup narrows them)."""
    return set(re.findall(rf"\b{_NAME}\b", text))


def introduce_referents(text: str, referents: dict[str, NamedReferent]) -> str:
    """``text`` with the first mention of each known name said with its owner and kind, unless
    the text already introduces it: "Biscuit died" → "The user's golden retriever Biscuit
    died"."""
    for name, referent in referents.items():
        mention = re.search(rf"\b{re.escape(name)}\b", text)
        if mention is None or _introduces(text, name):
            continue
        # The owner named earlier in the sentence: "Andrew took their puppy Toby".
        owner_before = re.search(rf"\b{re.escape(referent.owner)}\b", text[: mention.start()], re.I)
        described = (
            f"their {referent.kind} {name}" if owner_before is not None else referent.described
        )
        if mention.start() == 0:
            described = described[:1].upper() + described[1:]
        text = text[: mention.start()] + described + text[mention.end() :]
    return text


def _introduces(text: str, name: str) -> bool:
    introduced = (match["name"] for pattern in _INTRODUCTIONS for match in pattern.finditer(text))
    named = re.search(rf"\b(?:named|called)\s+{re.escape(name)}\b", text)
    return name in introduced or named is not None


#: An introduced name as :func:`introduce_referents` writes it: "the user's golden retriever
#: Biscuit", "their puppy Toby".
_INTRODUCED_NAME = re.compile(
    rf"\b(?:(?:[Tt]he user|{_NAME})['’]s|[Tt]heir)\s+(?P<kind>{_KIND})\s+(?P<name>{_NAME})"
)


def plain_names(text: str) -> str:
    """``text`` with each introduced name said alone ("The user's golden retriever Biscuit
    died" → "Biscuit died"): the change rules key a claim by the name it is about, as they did
    before the name was introduced."""

    def plain(match: re.Match[str]) -> str:
        if match["kind"].lower().split()[-1] not in _KINDS:
            return match.group(0)
        return match["name"]

    return _INTRODUCED_NAME.sub(plain, text)
