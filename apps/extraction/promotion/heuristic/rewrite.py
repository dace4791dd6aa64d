"""The third-person rewrite: "I prefer tabs" → "The user prefers tabs.".

First-person subjects, contractions and possessives (and, for assistant turns, second-person
ones) are rewritten so a statement stands alone in a later session; the rest of the sentence
is kept verbatim.
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _rx, _words

# --- Third-person rewrite ----------------------------------------------------------------
_ADVERBS = (
    "no longer|really|always|never|usually|generally|also|only|mostly|just|still|both|definitely|"
    "strongly|actually|normally|typically|mainly|often|sometimes|rarely|already|even|"
    "totally|absolutely|honestly|basically|currently|now|personally|all|maybe|probably|perhaps|"
    "possibly"
)
_UNCHANGED_VERBS = _words(
    "can can't cannot could couldn't will won't would wouldn't should shouldn't must "
    "mustn't may might shall"
)
#: Irregular past forms that are not also present forms ("read", "put", "quit" are both, and
#: keep the present rewrite): "I got married" stays "got", not "gots".
_IRREGULAR_PAST = _words(
    "was were went got had saw made took came gave found thought told felt left kept began "
    "ran bought brought caught taught sold sent spent built lost met paid said sat stood "
    "understood won wrote drove ate fell flew grew knew rode rose sang swam threw wore woke "
    "became chose forgot hid led lent lit meant slept spoke stuck struck swore tore wept did "
    "heard held drew dug fought fed forgave hung laid overcame rang sank shook shot slid spun "
    "stole stung swung broke"
)
_IRREGULAR = {
    "am": "is",
    "are": "is",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    "were": "was",
    "aren't": "isn't",
    "haven't": "hasn't",
    "weren't": "wasn't",
}
_SUBJECT = re.compile(
    rf"\b(I|i|we|We|WE)\b(?!['’.]\w)((?:\s+(?:{_ADVERBS}))*)\s+([A-Za-z']+)(?![-\w])"
)
_CONTRACTIONS = [
    (_rx(r"\bi['’]m\b|\bi am\b"), "the user is"),
    (_rx(r"\bi['’]ve\b"), "the user has"),
    (_rx(r"\bi['’]d\b"), "the user would"),
    (_rx(r"\bi['’]ll\b"), "the user will"),
    (_rx(r"\bwe['’]re\b|\bwe are\b"), "the team is"),
    (_rx(r"\bwe['’]ve\b"), "the team has"),
    (_rx(r"\bwe['’]d\b"), "the team would"),
    (_rx(r"\bwe['’]ll\b"), "the team will"),
    (_rx(r"^let['’]s\b"), "the team will"),
]
# Possessive and object pronouns: the full noun the first time, a pronoun after that.
_POSSESSIVES = [
    (_rx(r"\bmy\b"), "the user", "the user's", "their"),
    (_rx(r"\bmine\b"), "the user", "the user's", "theirs"),
    (_rx(r"\bme\b"), "the user", "the user", "them"),
    (_rx(r"\bmyself\b"), "the user", "the user", "themselves"),
    (_rx(r"\bour\b"), "the team", "the team's", "the team's"),
    (_rx(r"\bours\b"), "the team", "the team's", "the team's"),
    (re.compile(r"\bus\b"), "the team", "the team", "the team"),
    (_rx(r"\bourselves\b"), "the team", "the team", "itself"),
]
_SECOND_PERSON = [
    (_rx(r"\byou['’]re\b|\byou are\b"), "the user is"),
    (_rx(r"\byour\b"), "the user's"),
    (_rx(r"\byou\b"), "the user"),
]


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    past = (lower.endswith("ed") and not lower.endswith("eed")) or lower in _IRREGULAR_PAST
    if lower in _UNCHANGED_VERBS or past or lower.endswith(("'t", "’t")) or not lower.isalpha():
        return verb
    if lower.endswith(("ss", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("s"):
        return verb
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str, *, addressee_is_user: bool = False) -> str:
    """Rewrite first-person pronouns (and, for assistant turns, second-person ones) so the
    sentence stands alone: "I prefer tabs" → "The user prefers tabs."."""

    def _subject(match: re.Match[str]) -> str:
        who = "the user" if match.group(1).lower() == "i" else "the team"
        return f"{who}{match.group(2)} {_conjugate(match.group(3))}"

    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _SUBJECT.sub(_subject, text)
    for pattern, noun, full, pronoun in _POSSESSIVES:
        while (match := pattern.search(text)) is not None:
            replacement = pronoun if noun in text[: match.start()].lower() else full
            text = text[: match.start()] + replacement + text[match.end() :]
    if addressee_is_user:
        for pattern, replacement in _SECOND_PERSON:
            text = pattern.sub(replacement, text)
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:-!. ")
    return text[:1].upper() + text[1:] + "." if text else ""
