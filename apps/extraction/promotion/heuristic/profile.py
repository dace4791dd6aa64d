"""Profile facts: who the speaker is and what changed, each a statement that stands alone.

What a person says about themselves in passing ("I moved to Berlin last month", "we adopted
a puppy", "no pets right now", "I lost my job at the plant") is what a later session needs
most and what the sentence rules (``scoring.py``) skip: it is past tense, dated relative to
the day it was said, or an answer without a subject. Here a sentence is kept when the change
rules (``apps.extraction.changes``) read an attribute of the speaker in it — occupation, home,
relationship, diet, pets, health, a setting, where an application stands, an activity or a
commitment that recurs, a preference — and it names no
one it cannot ("her", "it", "they"): it is rewritten in the third person, its relative dates
resolved against when it was said, and it happened on the day it names, else when it was said.
Such statements are what the change detector compares, so a new job retires the old one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, time

from apps.extraction.changes import ALIVE, Claim, extract_claims
from apps.extraction.promotion.heuristic.conversation import attribute
from apps.extraction.promotion.heuristic.dates import day_text, resolve_relative_dates
from apps.extraction.promotion.heuristic.levels import MAX_SENTENCE_CHARS, PROFILE, _rx
from apps.extraction.promotion.heuristic.patterns import (
    _HYPOTHETICAL,
    _QUESTION_OPENER,
    LEAD_IN,
)
from apps.extraction.promotion.heuristic.rewrite import third_person
from apps.extraction.promotion.heuristic.safety import is_injection, looks_secret
from apps.extraction.promotion.heuristic.splitting import sentences
from apps.extraction.promotion.types import Candidate, Turn

#: The attributes a profile fact states (a tool is a setting's value: "switched from Poetry to
#: uv for dependencies"; an activity, a commitment begun, ended or kept on a schedule: "started
#: a pottery class on Tuesdays"); decisions are the sentence rules' job.
PROFILE_FAMILIES = frozenset(
    {
        "employer",
        "role",
        "residence",
        "household",
        "diet",
        "relationship",
        "pets",
        "health",
        "condition",
        "key",
        "result",
        "tool",
        "activity",
        "preference",
    }
)
#: Between named people the sentence rules already keep what a speaker does, likes or has
#: ("Melanie signed up for a pottery class on Tuesdays"); a profile fact would repeat it.
_CONVERSATION_FAMILIES = PROFILE_FAMILIES - {"activity", "preference", "condition"}
#: A pronoun whose referent the statement does not carry ("their" is the speaker's own).
_DANGLING = _rx(r"\b(it|its|this|that|these|those|he|she|him|her|hers|they|them|there)\b")
_OPENER = _rx(
    r"^(?:(?:yes|yeah|yep|oh|ah|well|so|and|but|also|actually|guess what|by the way|"
    r"btw|anyway|(?:(?:big|sad|good|great|exciting|some)\s+)?news|(?:(?:quick|exciting|big)\s+)?"
    r"update|fun fact|hey|hi|hello|heads up(?:\s+that)?|just so you know|fyi)\b[\s,:;!.-]*)+"
)
#: What the user learned, told as what holds: "I found out I'm lactose intolerant", "turns
#: out I'm allergic to cats".
_FOUND_OUT = _rx(
    r"^(?:i\s+(?:just\s+|recently\s+)?(?:found out|learned|learnt|realized|realised|discovered)|"
    r"(?:it\s+)?turns out)\s+(?:that\s+)?(?=(?:i|i'm|i’m|i've|my)\b)"
)
#: "someone new, her name is Priya": the name for the one it names.
_NAMED_AFTER = re.compile(
    r"\b(?:someone|somebody)(?:\s+new)?,\s+(?:his|her|their)\s+name\s+is\s+"
    r"(?P<name>[A-Z][a-z]+)\b"
)
_SPEAKER = re.compile(r"^[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}:\s+")
_FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i’m|i've|my|we|we're|our|(?-i:[A-Z][a-z]+) (?:and|&) I)\b", re.I
)
#: "Sam and I decided to …": one clause of two people, never split at its "and I".
_COUPLE_OPENER = re.compile(r"^[A-Z][a-z]+ (?:and|&) I\b")
#: A label before the user's own words: "Quick intro: I'm a nurse", "Update: we moved".
_LABEL = re.compile(r"^[A-Za-z]+(?: [A-Za-z]+){0,7}:\s+(?=(?:i|i'm|i’m|i've|my|we|our)\b)", re.I)
#: A remark spliced on after a comma, with a subject of its own: "…, the mountains are
#: amazing", "…, their weekends are too busy now", "…, it's been hard", "…, she's a grumpy
#: tabby".
_ASIDE = re.compile(
    r"^(?P<head>.+?),\s+(?:(?:he|she|they)(?:['’]s|['’]re)\s|"
    r"(?:the|their|its|it|this|that|these|those|he|she|they)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:is|are|was|were|has been|have been|feels?|looks?|seems?|doesn't|does not|don't|"
    r"didn't|won't|can't|isn't|aren't|leaves?|makes?|takes?|keeps?)|it's|it’s)\b[^,]*\.?$",
    re.I,
)
#: What follows from it or how it goes, cut only where it names what the statement does not
#: ("…, so no more classroom teaching for them", "… and it's going really well"); a reason
#: that stands ("…, so no running for a while") stays.
_CONSEQUENCE = re.compile(
    r"^(?P<head>.+?)(?:,\s+(?:so|which)\b|,?\s+and\s+(?:it's|it’s|it is|it has been)\b).*$",
    re.I,
)
#: What the user says in passing after another's clause, kept only with the whole sentence.
_PASSING = frozenset({"preference", "choice"})
#: A "we" whose change is the user's too: "we relocated to Austin", "we adopted a puppy",
#: "we're engaged".
_HOUSEHOLD_FAMILIES = frozenset({"residence", "household", "pets", "relationship"})
#: Where one sentence of the user's says two things about them: "I'm a nurse and I live in
#: Boston" is two facts, each of which may change on its own.
_OWN_CLAUSE = re.compile(r",?\s+(?:and|but)\s+(?=(?:i|i'm|i’m|i've|my|we)\s)", re.I)
#: "I work as a paralegal in Seattle, I'm married to Jordan": clauses joined by a comma alone,
#: split only where each says something of the user ("I'm Tomasz, I'm on the platform team"
#: stays one).
_COMMA_CLAUSE = re.compile(r",\s+(?=(?:i|i'm|i’m|i've)\s)", re.I)
#: A chat remark without its subject: "Started volunteering at the food bank", "Moved to
#: Austin last week" — the speaker's own.
_SUBJECTLESS = re.compile(
    r"^(?=(?:started|stopped|quit|joined|moved|adopted|got|began|finished|left|switched|bought|"
    r"sold|lost|passed|failed|signed up|enrolled|graduated|retired|relocated|gave up)\b)",
    re.I,
)
#: "Portland is home now": where the user lives, told of the place.
_PLACE_IS_HOME = re.compile(
    r"^(?P<place>[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}) is (?:now )?(?:our |my )?home(?: now)?\b"
)
#: What a death's sentence goes on to say of the one who died: "…, he was fourteen".
_AFTER_DEATH = re.compile(r",\s+(?:he|she|they|it)\b.*$", re.I)


def _usable(sentence: str) -> bool:
    low = sentence.lower().strip()
    return not (
        not low
        or low.endswith("?")
        or _QUESTION_OPENER.match(low)
        or _HYPOTHETICAL.search(low)
        or len(sentence) > MAX_SENTENCE_CHARS
        or looks_secret(sentence)
        or is_injection(sentence)
    )


def _profile_claims(
    text: str, entity: str, families: frozenset[str] = PROFILE_FAMILIES
) -> list[Claim]:
    return [
        claim
        for claim in extract_claims(text)
        if claim.entity == entity and claim.family in families
    ]


def _plural(species: str) -> str:
    return "pets" if species == "pet" else f"{species}s"


def _canonical(name: str, claims: list[Claim]) -> str | None:
    """A statement for a claim made without a subject ("No, no pets right now.")."""
    claim = claims[0]
    if claim.family == "pets":
        species = claim.attribute.split(":", 1)[1]
        if claim.value == "0":
            return f"{name} has no {_plural(species)}."
        if claim.value.isdigit():
            return f"{name} has {claim.value} {_plural(species)}."
    return None


def _event_time(turn: Turn, day: date | None) -> datetime | None:
    return datetime.combine(day, time(), tzinfo=UTC) if day is not None else turn.occurred_at


def _agent_facts(turn: Turn) -> list[Candidate]:
    found = []
    for sentence in sentences(turn.content):
        body = _LABEL.sub("", LEAD_IN.sub("", _OPENER.sub("", sentence.strip())).strip())
        if not _usable(body):
            continue  # a sentence with a secret, a question or a hypothetical: none of it
        # Split a sentence the user is the subject of: "Tom and I broke up" is one.
        alone = _FIRST_PERSON.match(body) and not _COUPLE_OPENER.match(body)
        clauses = _OWN_CLAUSE.split(body) if alone else [body]
        for clause in clauses:
            found.extend(_clause_facts(turn, clause))
        if not alone and not _COUPLE_OPENER.match(body):
            found.extend(_states_told_after(turn, body))
    return found


def _states_told_after(turn: Turn, body: str) -> list[Candidate]:
    """The user's own clauses after someone else's that say how things stand for the user
    ("Cast came off today and my wrist is fine now"); a liking said in passing ("…, the
    apartment is tiny but I love the neighborhood") is no fact kept alone."""
    return [
        fact
        for clause in _OWN_CLAUSE.split(body)[1:]
        for fact in _clause_facts(turn, clause)
        if any(claim.family not in _PASSING for claim in _profile_claims(fact.text, "user"))
    ]


def _as_sentence(clause: str) -> str:
    return clause.strip().rstrip(",.!") + "."


def _clause_facts(turn: Turn, clause: str) -> list[Candidate]:
    """The facts of ``clause``: one per part where a comma alone opens another of the user's
    clauses and every part says something of the user (see :data:`_COMMA_CLAUSE`); else the
    clause's own."""
    parts = _COMMA_CLAUSE.split(clause)
    if len(parts) > 1:
        facts = [_agent_fact(turn, _as_sentence(part)) for part in parts]
        if all(facts):
            return [fact for part_facts in facts for fact in part_facts]
    return _agent_fact(turn, _as_sentence(clause))


def _without_aside(text: str) -> str:
    """``text`` less a remark spliced on after a comma ("moved to Denver, the mountains are
    amazing"), when the statement says what it says without it."""
    match = _ASIDE.match(text)
    if match is None:
        return text
    head = match.group("head") + "."
    return head if _profile_claims(head, "user") else text


def _agent_fact(turn: Turn, body: str) -> list[Candidate]:
    """The statement ``body`` (one clause of the user's) makes about the user, if any."""
    body = _NAMED_AFTER.sub(r"\g<name>", _FOUND_OUT.sub("", body))
    if _SUBJECTLESS.match(body):
        body = f"I {body[:1].lower()}{body[1:]}"
    if (home := _PLACE_IS_HOME.match(body)) is not None:
        body = f"I live in {home.group('place')} now."
    if not _usable(body):
        return []
    if not _FIRST_PERSON.match(body):
        return _death(turn, body)
    resolved = resolve_relative_dates(body, turn.occurred_at)
    text = _without_aside(_household_change(third_person(resolved.text)))
    if _DANGLING.search(text) and (consequence := _CONSEQUENCE.match(text)) is not None:
        text = consequence.group("head") + "."
    if not _profile_claims(text, "user") or _DANGLING.search(text):
        return _death(turn, body)
    return [_candidate(text, turn, resolved.day)]


def _household_change(text: str) -> str:
    """ "The team relocated to Austin" → "The user relocated to Austin": in the user's own
    words, a "we" that moved house or adopted a pet is the user's household."""
    if not text.startswith("The team ") or not any(
        claim.family in _HOUSEHOLD_FAMILIES for claim in _profile_claims(text, "team")
    ):
        return text
    return "The user " + text.removeprefix("The team ")


def _death(turn: Turn, body: str) -> list[Candidate]:
    """ "Miso passed away on Tuesday", "my cat Miso died": the death of someone named, which
    ends what held of them."""
    resolved = resolve_relative_dates(_AFTER_DEATH.sub("", body), turn.occurred_at)
    text = third_person(resolved.text)
    died = any(claim.family == ALIVE for claim in extract_claims(text))
    if not died or _DANGLING.search(text):
        return []
    return [_candidate(text, turn, resolved.day)]


def _conversation_facts(turn: Turn, *, speaker: str, other: str | None) -> list[Candidate]:
    found = []
    body = _SPEAKER.sub("", turn.content.strip())
    for sentence in sentences(body):
        sentence = LEAD_IN.sub("", _OPENER.sub("", sentence.strip())).strip()
        if not _usable(sentence):
            continue
        resolved = resolve_relative_dates(sentence, turn.occurred_at)
        text = attribute(resolved.text, speaker=speaker, other=other).strip()
        claims = _profile_claims(f"{speaker}: {text}", speaker.lower(), _CONVERSATION_FAMILIES)
        if not claims:
            continue
        if not text.startswith(speaker):
            canonical = _canonical(speaker, claims)
            if canonical is None:
                continue
            text = canonical
        if _DANGLING.search(text):
            continue
        text = text[:1].upper() + text[1:]
        text = text if text[-1] in ".!" else text + "."
        if turn.occurred_at is not None:
            text = f"{text} (said on {day_text(turn.occurred_at.astimezone(UTC).date())})"
        found.append(_candidate(text, turn, resolved.day))
    return found


def _candidate(text: str, turn: Turn, day: date | None) -> Candidate:
    return Candidate(
        text=text,
        confidence=PROFILE,
        kind="fact",
        source_seqs=(turn.seq,) if turn.seq is not None else (),
        occurred_at=_event_time(turn, day),
    )


def profile_candidates(
    turns: Sequence[Turn], *, names: dict[str, str] | None, injected: set[int]
) -> list[Candidate]:
    """Profile facts of ``turns``: the user's own (``user`` and ``fact`` turns) in an agent
    session; each speaker's in a conversation between named people (``names``: role → name)."""
    found: list[Candidate] = []
    people = set(names.values()) if names is not None else set()
    for index, turn in enumerate(turns):
        if index in injected:
            continue
        if names is None:
            if turn.role in ("user", "fact"):
                found.extend(_agent_facts(turn))
        elif turn.role in names:
            speaker = names[turn.role]
            others = people - {speaker}
            found.extend(
                _conversation_facts(
                    turn, speaker=speaker, other=next(iter(others)) if len(others) == 1 else None
                )
            )
    return found
