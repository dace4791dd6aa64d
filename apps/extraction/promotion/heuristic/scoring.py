"""Per-sentence scoring: one cleaned sentence → a statement with a confidence and a kind.

Applies the hard filters, skips questions, hypotheticals and transient steps, scores the
strongest durability signal, applies the hedge / pronoun / record adjustments and rewrites
the survivor into the third person. Also decides which sentences of which turns are read
(user and fact turns in full, assistant turns only after a recording marker).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from apps.extraction.promotion.heuristic.levels import (
    ACKNOWLEDGED,
    CORRECTION,
    DECISION,
    EXPLICIT,
    FACT_TURN,
    HABITUAL,
    HEDGE_PENALTY,
    IDENTITY,
    MAX_SENTENCE_CHARS,
    MIN_CONTENT_WORDS,
    MIN_WORDS,
    PREFERENCE,
    PRONOUN_PENALTY,
    QUALIFIED,
    RECORD_BONUS,
    RECORDED,
    UNIVERSAL,
    _rx,
)
from apps.extraction.promotion.heuristic.patterns import (
    _CONTENT_STOPWORDS,
    _CORRECTION_OPENER,
    _DECISION,
    _DEIXIS,
    _EXPLICIT,
    _FIRST_PERSON_FACT,
    _HEDGE,
    _HYPOTHETICAL,
    _IDENTITY,
    _IMPERATIVE,
    _LEADING_HEDGE,
    _LEADING_PRONOUN,
    _NEGATIVE_IMPERATIVE,
    _NO_OPENER,
    _PREFERENCE,
    _PROBLEM,
    _QUALIFIED,
    _QUESTION_OPENER,
    _RECORD_MARKER,
    _TRANSIENT,
    _UNIVERSAL,
    _strip_leading,
    _strip_trailing,
    _trim_clauses,
)
from apps.extraction.promotion.heuristic.rewrite import third_person
from apps.extraction.promotion.heuristic.safety import is_injection, looks_secret
from apps.extraction.promotion.heuristic.similarity import _PRONOUNS, _stem, _tokens
from apps.extraction.promotion.heuristic.splitting import sentences
from apps.extraction.promotion.types import Turn


# --- Extraction --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Statement:
    text: str
    confidence: float
    kind: str
    position: tuple[int, int]
    #: An assistant acknowledgement ("Understood: …") that restates the previous user turn.
    acknowledgement: bool = False


#: A request about how the assistant answers: "Please keep replies in plain text", "use bullet
#: points in summaries", "answer in Spanish".
_REPLY_STYLE = _rx(
    r"\b(replies|reply|answers|answer|responses|response|respond|summaries|explanations|messages)"
    r"\b.*\b(short|shorter|brief|concise|plain text|bullet|bullets|markdown|formal|casual|"
    r"under (a |an )?[\w-]+ words|word limit|"
    r"simple|detailed|in (english|spanish|french|german|italian|portuguese|dutch|japanese|"
    r"chinese|korean|hindi|arabic|polish|swedish))\b"
)
#: A request asked as a question: "Can you keep your answers under a hundred words from now
#: on?" (kept only when it asks for a lasting way of answering).
_POLITE_REQUEST = _rx(r"^(?:can|could|would|will) you\s+(?:please\s+)?(?P<request>\w.*?)\?*$")
#: What a style request is told as: the request itself, less "please" and a reason given.
_REQUEST_REASON = _rx(r",\s+(?=(i|i'm|i've|it|it's|since|because|as|so)\b)")
#: He, she, him, her: someone the statement must name before it, or it says nothing later.
_PERSONAL_PRONOUN = _rx(r"\b(he|she|him|her|hers|himself|herself)\b")
_ANTECEDENT = re.compile(
    r"(?<!^)\b[A-Z][a-z]+|\b(?i:mom|mother|dad|father|sister|brother|wife|husband|partner|"
    r"girlfriend|boyfriend|daughter|son|friend|boss|manager|colleague|coworker|neighbou?r|"
    r"cousin|aunt|uncle|grand\w+|niece|nephew|doctor|teacher|therapist|coach|kid|child|baby|"
    r"cat|dog|puppy|kitten|landlord|landlady|roommate|teammate|client|customer|mentor)s?\b"
)


def _names_no_one(text: str) -> bool:
    """Whether ``text`` says "her" or "him" of no one it names first ("The user misses her a
    lot.")."""
    pronoun = _PERSONAL_PRONOUN.search(text)
    return pronoun is not None and _ANTECEDENT.search(text[: pronoun.start()]) is None


def _request(body: str) -> str:
    """ "Please keep replies in plain text, I read them on my watch" → "The user wants the
    assistant to keep replies in plain text"."""
    core = _REQUEST_REASON.split(re.sub(r"^please\s+", "", body, flags=re.I), maxsplit=1)[0]
    # "keep your answers short": the assistant's own answers.
    core = re.sub(r"\byour\b", "its", core, flags=re.I)
    return f"the user wants the assistant to {core[:1].lower()}{core[1:]}"


def _content_words(text: str) -> int:
    return len(_tokens(text) - {_stem(word) for word in _CONTENT_STOPWORDS | _PRONOUNS})


def _score(body: str, *, correction: bool) -> tuple[float, str] | None:
    """(confidence, kind) for a cleaned sentence, or None when it carries no durable signal."""
    low = body.lower()
    first_singular = re.search(r"\b(i|i'm|i've|my|me)\b", low) is not None
    if correction:
        return CORRECTION, "correction"
    if _DEIXIS.search(low):
        return None
    if _NEGATIVE_IMPERATIVE.match(low):
        kind = "preference" if first_singular else "decision"
        return (EXPLICIT if _EXPLICIT.search(low) else HABITUAL), kind
    if _IMPERATIVE.match(low):
        if _EXPLICIT.search(low) or _RECORD_MARKER.search(low):
            # How to answer the user is the user's preference; any other rule a decision.
            mine = first_singular or _REPLY_STYLE.search(low) is not None
            return EXPLICIT, "preference" if mine else "decision"
        if _PREFERENCE.search(low) or _REPLY_STYLE.search(low):
            return HABITUAL, "preference"
        if _UNIVERSAL.search(low):
            return HABITUAL, "decision"
        return None  # a task step: "fix it", "open a PR"
    if _DECISION.search(low):
        return DECISION, "decision"
    if _PREFERENCE.search(low):
        return PREFERENCE, "preference"
    if _EXPLICIT.search(low):
        return EXPLICIT, "preference" if first_singular and "we" not in low.split() else "decision"
    if _PROBLEM.search(re.split(r",\s+|;\s+", low)[0]):
        return None
    if _IDENTITY.search(body):
        return IDENTITY, "fact"
    if _FIRST_PERSON_FACT.search(low):
        return HABITUAL, "fact"
    if _UNIVERSAL.search(low):
        return UNIVERSAL, "fact"
    if _QUALIFIED.search(low):
        return QUALIFIED, "fact"
    return None


def _statement(
    sentence: str,
    *,
    position: tuple[int, int],
    answered_question: bool,
    base: tuple[float, str] | None = None,
    addressee_is_user: bool = False,
) -> _Statement | None:
    if len(sentence) > MAX_SENTENCE_CHARS or looks_secret(sentence) or is_injection(sentence):
        return None
    correction = bool(_CORRECTION_OPENER.search(sentence)) or (
        bool(_NO_OPENER.search(sentence)) and not answered_question
    )
    recorded = bool(_RECORD_MARKER.search(sentence))
    body = _strip_trailing(_strip_leading(sentence.strip()))
    if (polite := _POLITE_REQUEST.match(body)) is not None and base is None:
        request = polite.group("request")
        if _REPLY_STYLE.search(request) or _EXPLICIT.search(request):
            body = request  # asked, but a standing request: read as one
    if not body or (_QUESTION_OPENER.match(body) and not _NEGATIVE_IMPERATIVE.match(body)):
        return None
    if _HYPOTHETICAL.search(body):
        return None
    body = _trim_clauses(body)
    low = body.lower()
    if low.rstrip().endswith("?") or len(low.split()) < MIN_WORDS:
        return None
    if _TRANSIENT.search(low) and not (_EXPLICIT.search(low) or base is not None):
        return None
    if correction and _IMPERATIVE.match(low) and not _NEGATIVE_IMPERATIVE.match(low):
        return None
    scored = base or _score(body, correction=correction)
    if scored is None:
        return None
    confidence, kind = scored
    if base is not None and correction:
        kind = "correction"
    if _HEDGE.search(low):
        confidence -= HEDGE_PENALTY
    if _LEADING_PRONOUN.match(low):
        confidence -= PRONOUN_PENALTY
    if recorded:
        confidence += RECORD_BONUS
    if base is None and _IMPERATIVE.match(low) and (polite or _REPLY_STYLE.search(low)):
        body = _request(body)
    text = third_person(_LEADING_HEDGE.sub("", body), addressee_is_user=addressee_is_user)
    if not text or _content_words(text) < MIN_CONTENT_WORDS or _names_no_one(text):
        return None  # "Please keep that in mind going forward.": nothing left to remember
    return _Statement(
        text=text,
        confidence=round(min(max(confidence, 0.0), 1.0), 2),
        kind=kind,
        position=position,
        acknowledgement=base is not None and base[0] == ACKNOWLEDGED,
    )


_ASSISTANT_MARKER = _rx(
    r"^\W*(?P<marker>decision|decided|agreed|confirmed|noted|for the record|fact|"
    r"note to self|understood|got it)\s*:\s*(?P<body>\S.*)$"
)
_MARKER_LEVEL = {
    "decision": (DECISION, "decision"),
    "decided": (DECISION, "decision"),
    "agreed": (DECISION, "decision"),
    "confirmed": (RECORDED, "fact"),
    "noted": (RECORDED, "fact"),
    "for the record": (RECORDED, "fact"),
    "fact": (RECORDED, "fact"),
    "note to self": (RECORDED, "fact"),
    "understood": (ACKNOWLEDGED, "fact"),
    "got it": (ACKNOWLEDGED, "fact"),
}


def _turn_statements(turn: Turn, *, index: int, answered_question: bool) -> Iterator[_Statement]:
    for number, sentence in enumerate(sentences(turn.content)):
        position = (index, number)
        if turn.role == "user":
            found = _statement(sentence, position=position, answered_question=answered_question)
        elif turn.role == "fact":
            found = _statement(
                sentence,
                position=position,
                answered_question=True,
                base=(FACT_TURN, "fact"),
            )
        else:  # assistant: only explicitly recorded decisions and facts
            marked = _ASSISTANT_MARKER.match(sentence)
            if marked is None:
                continue
            level = _MARKER_LEVEL[marked.group("marker").lower()]
            found = _statement(
                marked.group("body"),
                position=position,
                answered_question=True,
                base=level,
                addressee_is_user=True,
            )
        if found is not None:
            yield found
