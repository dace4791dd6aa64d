"""The third-person rewrite: "I prefer tabs" → "The user prefers tabs.".

First-person subjects, contractions and possessives (and, for assistant turns, second-person
ones) are rewritten so a statement stands alone in a later session; the rest of the sentence
is kept verbatim.
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _rx
from apps.extraction.verbs import third_person_verb

# --- Third-person rewrite ----------------------------------------------------------------
_ADVERBS = (
    "no longer|really|always|never|usually|generally|also|only|mostly|just|still|both|definitely|"
    "strongly|actually|normally|typically|mainly|often|sometimes|rarely|already|even|"
    "totally|absolutely|honestly|basically|currently|now|personally|all|maybe|probably|perhaps|"
    "possibly"
)
_SUBJECT = re.compile(
    rf"\b(I|i|we|We|WE)\b(?!['’.]\w)((?:\s+(?:{_ADVERBS}))*)\s+([A-Za-z']+)(?![-\w])"
)
# A second verb of the same first-person subject, after "and now", "but still", …: "I left the
# hospital and now work at Globex". Only before a word that opens a verb's complement, so "and
# now pizza" is left alone.
_COORDINATED = re.compile(
    r"\b(and|but)(\s+(?:now|also|still|currently|then|recently|finally|since))\s+([a-z]+)"
    r"(?=\s+(?:as|at|in|on|for|with|from|to|a|an|the|their|his|her|it|them|there|here)\b)"
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


def third_person(text: str, *, addressee_is_user: bool = False) -> str:
    """Rewrite first-person pronouns (and, for assistant turns, second-person ones) so the
    sentence stands alone: "I prefer tabs" → "The user prefers tabs."."""

    def _subject(match: re.Match[str]) -> str:
        who = "the user" if match.group(1).lower() == "i" else "the team"
        return f"{who}{match.group(2)} {third_person_verb(match.group(3))}"

    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text, subjects = _SUBJECT.subn(_subject, text)
    if subjects:
        text = _COORDINATED.sub(
            lambda match: f"{match.group(1)}{match.group(2)} {third_person_verb(match.group(3))}",
            text,
        )
    for pattern, noun, full, pronoun in _POSSESSIVES:
        while (match := pattern.search(text)) is not None:
            replacement = pronoun if noun in text[: match.start()].lower() else full
            text = text[: match.start()] + replacement + text[match.end() :]
    if addressee_is_user:
        for pattern, replacement in _SECOND_PERSON:
            text = pattern.sub(replacement, text)
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:-!. ")
    return text[:1].upper() + text[1:] + "." if text else ""
