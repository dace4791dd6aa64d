"""The third-person rewrite: "I prefer tabs" → "The user prefers tabs.".

First-person subjects, contractions and possessives (and, for assistant turns, second-person
ones) are rewritten so a statement stands alone in a later session; the rest of the sentence
is kept verbatim.
"""

from __future__ import annotations

import re

from apps.extraction.changes.text import shield_abbreviations
from apps.extraction.promotion.heuristic.levels import _rx
from apps.extraction.verbs import third_person_verb

# --- Third-person rewrite ----------------------------------------------------------------
_ADVERBS = (
    "no longer|really|always|never|usually|generally|also|only|mostly|just|still|both|definitely|"
    "strongly|actually|normally|typically|mainly|often|sometimes|rarely|already|even|"
    "totally|absolutely|honestly|basically|currently|now|personally|all|maybe|probably|perhaps|"
    "possibly|finally|recently|eventually|officially|suddenly|gradually|occasionally|regularly|"
    "seriously|literally|barely|hardly|nearly|almost|once|again"
)
# Verbs that end in "ly": any other word that does is an adverb between a subject and its verb
# ("I probably will", "I barely slept"), which the verb after it agrees past.
_LY_VERBS = "apply|reply|rely|fly|supply|comply|multiply|imply|ally|bully|tally|rally"
#: One adverb between a subject and its verb.
ADVERB = rf"(?:{_ADVERBS}|ever|sure|kinda|sorta|(?!(?:{_LY_VERBS})\b)[a-z]+ly)\b"
_SUBJECT = re.compile(rf"\b(I|i|we|We|WE)\b(?!['’.]\w)((?:\s+{ADVERB})*)\s+([A-Za-z']+)(?![-\w])")
# A second verb of the same first-person subject, after "and now", "but still", …: "I left the
# hospital and now work at Globex". Only before a word that opens a verb's complement, so "and
# now pizza" is left alone.
_COORDINATED = re.compile(
    r"\b(and|but)(\s+(?:now|also|still|currently|then|recently|finally|since))\s+([a-z]+)"
    r"(?=\s+(?:as|at|in|on|for|with|from|to|a|an|the|their|his|her|it|them|there|here)\b)"
)
# "My wife and I …": up to four words from the clause's start, then "and"/"or", just before
# the subject. Not when those words hold a subject or a verb of their own ("I have a dog and I
# love him", "she is nice and I like her"): that "and" joins two clauses.
_COMPOUND = re.compile(
    r"(?:^|[,.;:!?]\s+)(?P<before>(?:[\w'’]+\s+){0,3}[\w'’]+)\s+(?:and|or)\s+$", re.IGNORECASE
)
_OWN_CLAUSE = re.compile(
    r"\b(?:i|we|he|she|they|it|you|is|are|was|were|am|has|have|had|do|does|did|can|will|"
    r"would|could|should|got|get|gets)\b",
    re.IGNORECASE,
)


# "you" as a clause's subject: at a sentence's or clause's start, or after a word that opens a
# clause ("before you get here", "I hope you like it"). After a verb or a preposition it is an
# object ("I'll send you the recipe", "with you") and no verb follows it to agree; nor does
# one in "and you too".
_YOU_SUBJECT = re.compile(
    r"(?P<lead>(?:^|[.!?,;:]\s+|\b(?:and|but|so|or|if|when|whenever|before|after|until|till|"
    r"since|because|as|though|although|while|that|unless|once|hopes?|thinks?|bets?|"
    rf"guess(?:es)?|believes?|wish(?:es)?|sure|glad)\s+))you\b(?P<adverbs>(?:\s+{ADVERB})*)\s+"
    r"(?!(?:too|as|so|and|or|but|then|here|there|all|both|guys|two|again|well|back|more|"
    r"though|either|alone|yourself)\b)(?P<verb>[A-Za-z'’]+)(?![-\w])",
    re.IGNORECASE,
)


def second_person_subject(text: str, who: str) -> str:
    """``text`` with each "you" that is a clause's subject replaced by ``who`` (a third person)
    and its verb made to agree: "before you get here" → "before Joanna gets here". Other
    "you"s are left for the caller's object rule."""

    def agree(match: re.Match[str]) -> str:
        verb = third_person_verb(match.group("verb"))
        return f"{match.group('lead')}{who}{match.group('adverbs')} {verb}"

    return _YOU_SUBJECT.sub(agree, text)


def compound_subject(text: str, start: int) -> bool:
    """Whether the subject at ``start`` of ``text`` is one of several ("Tom and I"), so its
    verb stays plural."""
    # An abbreviation's full stop ("St. Luke's hospital and I") ends no clause.
    match = _COMPOUND.search(shield_abbreviations(text), 0, start)
    return match is not None and _OWN_CLAUSE.search(match.group("before")) is None


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
_OUR_HOUSEHOLD = _rx(
    r"\bour(?=\s+(?:(?:new|old|little|first|second|two|three|own)\s+)?(?:cats?|dogs?|pets?|"
    r"puppy|kitten|house|home|flat|apartment|place|kids|children|son|daughter|baby|family|"
    r"wedding|anniversary|marriage|relationship|separate ways|parents|garden|car)\b)"
)
# Possessive and object pronouns: the full noun the first time, a pronoun after that.
_POSSESSIVES = [
    (_rx(r"\bmy\b"), "the user", "the user's", "their"),
    (_rx(r"\bmine\b"), "the user", "the user's", "theirs"),
    (_rx(r"\bme\b"), "the user", "the user", "them"),
    (_rx(r"\bmyself\b"), "the user", "the user", "themselves"),
    # A household's "our" is the user's and theirs ("our cat Miso", "go our separate ways");
    # any other is a team's ("our API").
    (_OUR_HOUSEHOLD, "their", "their", "their"),
    (_rx(r"\bour\b"), "the team", "the team's", "the team's"),
    (_rx(r"\bours\b"), "the team", "the team's", "the team's"),
    (re.compile(r"\bus\b"), "the team", "the team", "the team"),
    (_rx(r"\bourselves\b"), "the team", "the team", "itself"),
]
_SECOND_PERSON = [
    (_rx(r"\byou (?:two|both|guys|all)\b"), "the user and others"),
    (_rx(r"\byou['’]re\b|\byou are\b"), "the user is"),
    (_rx(r"\byour\b"), "the user's"),
]
_YOU = _rx(r"\byou\b")


def third_person(text: str, *, addressee_is_user: bool = False) -> str:
    """Rewrite first-person pronouns (and, for assistant turns, second-person ones) so the
    sentence stands alone: "I prefer tabs" → "The user prefers tabs."."""

    def _subject(match: re.Match[str]) -> str:
        who = "the user" if match.group(1).lower() == "i" else "the team"
        # "My wife and I have …": a compound subject keeps its plural verb.
        compound = compound_subject(match.string, match.start())
        verb = match.group(3) if compound else third_person_verb(match.group(3))
        return f"{who}{match.group(2)} {verb}"

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
        text = _YOU.sub("the user", second_person_subject(text, "the user"))
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:-!. ")
    return text[:1].upper() + text[1:] + "." if text else ""
