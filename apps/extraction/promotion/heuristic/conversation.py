"""Conversations between named people: facts said in passing, attributed to who said them.

A session whose every ``user``/``assistant`` turn opens with a speaker's name ("Caroline: I
went to a support group yesterday") is a conversation between people (a chat log, a meeting
transcript, an imported history), not an agent serving a user. There a fact is rarely
announced ("remember that …"); it is said in passing, by either side. Each turn is read in full:

* questions, greetings, thanks and reactions ("Wow, that's so cool!") are dropped;
* a sentence is kept when it tells something: the speaker's own events, plans, preferences,
  relations and possessions (first person), or anything naming a person, place or number;
* first person is rewritten to the speaker's name and second person to the other speaker's,
  so the memory stands alone ("I'll send you the recipe" → "Melanie will send Caroline the
  recipe");
* relative dates are resolved against when the turn was said (:mod:`.dates`), and the memory
  says when it was said;
* what one turn tells is one memory, and near-duplicates within the session are merged.

The hard filters run first, as everywhere: an injected turn is dropped whole (two make the
session yield nothing), a sentence that looks like a secret is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time

from apps.extraction.promotion.heuristic.dates import day_text, resolve_relative_dates
from apps.extraction.promotion.heuristic.levels import (
    CONVERSATION_FACT,
    CONVERSATION_MIN_CONTENT_WORDS,
    HEDGE_PENALTY,
    MAX_SENTENCE_CHARS,
    NEAR_DUPLICATE_JACCARD,
    _rx,
    _words,
)
from apps.extraction.promotion.heuristic.patterns import (
    _HYPOTHETICAL,
    _QUESTION_OPENER,
    LEAD_IN,
)
from apps.extraction.promotion.heuristic.rewrite import (
    ADVERB,
    compound_subject,
    second_person_subject,
)
from apps.extraction.promotion.heuristic.safety import is_injection, looks_secret
from apps.extraction.promotion.heuristic.similarity import _jaccard, _tokens
from apps.extraction.promotion.heuristic.splitting import sentences
from apps.extraction.promotion.types import Candidate, Turn
from apps.extraction.verbs import third_person_verb

#: "Name: text", a name being one to three capitalised words.
_SPEAKER = re.compile(
    r"^(?P<name>[A-Z][\w'’.-]{0,40}(?: [A-Z][\w'’.-]{0,40}){0,2}):\s+(?P<text>\S.*)$", re.DOTALL
)
#: Words that open a line like a name but are labels ("Note: …", "Error: …").
_NOT_NAMES = _words(
    "note notes error warning decision decided agreed confirmed noted fact understood "
    "summary question answer update todo fixme system assistant user developer human ai "
    "bot agent model tip important reminder subject from to cc date re fwd step output "
    "input result example status reason because edit ps p.s got ok okay yes no"
)
_PEOPLE_ROLES = ("user", "assistant")

# --- what a sentence says ------------------------------------------------------------------
_FIRST_PERSON = _rx(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|us|our)\b")
_FILLER = _words(
    "wow cool awesome great amazing nice glad thanks thank hey hi hello yeah yes yep haha lol "
    "omg congrats congratulations sounds totally definitely absolutely really super so good "
    "fantastic wonderful incredible sweet proud happy love loved lovely fun beautiful "
    "awesome stunning gorgeous brilliant excellent impressive inspiring exciting "
    "interesting sure oh ah aw aww um hmm okay ok well glad pleased sorry hear heard "
    "thing things stuff lot lots much many way ways something anything everything "
    "really very pretty quite bit kinda kind sort time times always never just also "
    "keep mind good luck care take bye see soon talk later catch chat day night"
)
_FUNCTION = _words(
    "i i'm i've i'd i'll me my mine myself we we're we've we'll us our you you're you've "
    "you'd you'll your he she they them their his her him it it's its this that there "
    "here what which who have has had do does did don't didn't doesn't will would can "
    "could should can't won't am about into over up out if then than just too also "
    "get got go going been being was were is are be 's"
)
#: Reactions to what the other said: "That's so cool", "You've got guts", "Sounds fun".
_REACTION = _rx(
    r"^(that|this|it|these|those|what|how|sounds?|looks?|seems?|you|you're|you've|you'd|"
    r"you'll|your|must be|so|such)\b"
)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}")
_NUMBER = re.compile(r"\b\d+\b")
_HEDGE = _rx(r"\b(maybe|probably|perhaps|possibly|might|not sure|i guess|i wonder)\b")


def speakers(turns: Sequence[Turn]) -> dict[str, str] | None:
    """role → speaker name when this is a conversation between named people, else None.

    Every user/assistant turn must open with "Name: ", each role must keep one name, and the
    two roles must be different people.
    """
    names: dict[str, str] = {}
    spoken = 0
    for turn in turns:
        if turn.role not in _PEOPLE_ROLES:
            continue
        match = _SPEAKER.match(turn.content)
        if match is None or match.group("name").lower() in _NOT_NAMES:
            return None
        name = match.group("name")
        if names.setdefault(turn.role, name) != name:
            return None
        spoken += 1
    if spoken < 2 or len(set(names.values())) != len(names):
        return None
    return names


def _body(turn: Turn) -> str:
    match = _SPEAKER.match(turn.content)
    return match.group("text") if match is not None else turn.content


# --- rewriting -----------------------------------------------------------------------------
_PAST = _words(
    "was went got had saw made took came gave found thought told felt left kept began ran "
    "bought brought caught taught sold sent spent built lost met paid read said sat stood "
    "understood won wrote drove ate fell flew grew knew rode rose sang swam threw wore woke "
    "became chose forgot hid led lent lit meant put quit set shut slept spoke spread stuck "
    "struck swore tore upset wept did heard held hurt let cut hit began drew dug fought fed "
    "forgave hung laid lay overcame rang sank shook shot slid spun stole stung swung wound "
    "could would should might must can will may shall used"
)
#: Words after "I" that are not a present-tense verb to conjugate.
_NOT_VERBS = _words("and or but too as so then now")


def attribute(text: str, *, speaker: str, other: str | None) -> str:
    """First person → ``speaker``, second person → ``other`` (when the other is known)."""
    plural = f"{speaker} and others"
    rules: list[tuple[str, str]] = [
        (r"\bI['’]m\b|\bI am\b", f"{speaker} is"),
        (r"\bI['’]ve\b", f"{speaker} has"),
        (r"\bI['’]d\b", f"{speaker} would"),
        (r"\bI['’]ll\b", f"{speaker} will"),
        (r"\bwe['’]re\b|\bwe are\b", f"{plural} are"),
        (r"\bwe['’]ve\b", f"{plural} have"),
        (r"\bwe['’]ll\b", f"{plural} will"),
        (r"\bwe['’]d\b", f"{plural} would"),
    ]
    for pattern, replacement in rules:
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)

    def singular(match: re.Match[str]) -> str:
        # "Buddy and I have …": a compound subject keeps its plural verb.
        if compound_subject(match.string, match.start()):
            return f"{speaker}{match.group(1)} {match.group(2)}"
        return f"{speaker}{match.group(1)} {_present(match.group(2))}"

    text = re.sub(rf"\bI\b((?:\s+{ADVERB})*)\s+([A-Za-z']+)", singular, text)
    text = re.sub(r"\b[Ww]e\b", plural, text)
    for pattern, replacement in (
        (r"\bmy\b", f"{speaker}'s"),
        (r"\bmine\b", f"{speaker}'s"),
        (r"\bmyself\b", speaker),
        (r"\bme\b", speaker),
        (r"\bour\b", f"{speaker}'s"),
        (r"\bus\b", plural),
        (r"\bI\b", speaker),
    ):
        text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
    if other:
        for pattern, replacement in (
            (r"\byou (?:two|both|guys|all)\b", f"{other} and others"),
            (r"\byou['’]re\b|\byou are\b", f"{other} is"),
            (r"\byou['’]ve\b", f"{other} has"),
            (r"\byou['’]ll\b", f"{other} will"),
            (r"\byou['’]d\b", f"{other} would"),
            (r"\byours\b", f"{other}'s"),
            (r"\byour\b", f"{other}'s"),
            (r"\byourself\b", other),
        ):
            text = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
        text = second_person_subject(text, other)
        text = re.sub(r"\byou\b", other, text, flags=re.IGNORECASE)
    return text


def _present(verb: str) -> str:
    """The third-person form of the verb after "I"; past forms stay as they are."""
    if verb.lower() in _PAST or verb.lower() in _NOT_VERBS:
        return verb
    return third_person_verb(verb)


# --- selection -----------------------------------------------------------------------------
def _informative(sentence: str, *, names: set[str], answer: bool = False) -> bool:
    """Does the sentence tell something (not a question, greeting, thanks or reaction)?"""
    low = sentence.lower().strip()
    if not low or low.endswith("?") or _QUESTION_OPENER.match(low) or _HYPOTHETICAL.search(low):
        return False
    if len(sentence) > MAX_SENTENCE_CHARS or looks_secret(sentence) or is_injection(sentence):
        return False
    words = [w for w in re.findall(r"[a-z0-9']+", low) if w not in _FILLER]
    content = _tokens(" ".join(w for w in words if w not in _FUNCTION)) - {n.lower() for n in names}
    if len(content) < CONVERSATION_MIN_CONTENT_WORDS:
        return False
    first_person = _FIRST_PERSON.search(low) is not None
    named = _NUMBER.search(sentence) is not None or any(
        match.start() > 0 and match.group(0) not in names
        for match in _CAPITALISED.finditer(sentence.strip())
    )
    if _REACTION.match(low) and not named:
        return False
    # The first sentence after the other's question is its answer, however it is phrased
    # ("Researching adoption agencies, it's been a dream").
    return first_person or named or answer


@dataclass(frozen=True)
class _Said:
    text: str
    position: int
    confidence: float
    turn: Turn
    day: datetime | None


_GREETING = _rx(
    r"^(?:(?:hey|hi|hello|wow|whoa|oh|ah|aw+|yeah|yep|yes|yup|sure|well|so|ok(?:ay)?|thanks|"
    r"thank you|haha|lol|omg|totally|absolutely|definitely|exactly|right|great|cool|nice|"
    r"awesome|amazing|good|sweet|congrats|congratulations|totally agree|i agree|agreed|"
    r"no doubt|no way|oh my god|omg)\b[\s,!.:;-]*)+"
)


def _vocatives(sentence: str, names: set[str]) -> str:
    """Drop greetings, lead-ins and the addressee's name: "Hey Mel, I ran a race" → "I ran a
    race"."""

    def is_name(word: str) -> bool:
        return any(name.lower().startswith(word.lower()) for name in names) and len(word) >= 2

    previous = None
    while previous != sentence:
        previous = sentence
        sentence = LEAD_IN.sub("", _GREETING.sub("", sentence).lstrip()).lstrip()
        first = re.match(r"^([A-Z][a-z]+)\b[\s,!.:;-]+", sentence)
        if first is not None and is_name(first.group(1)):
            sentence = sentence[first.end() :]
    last = re.search(r",\s*([A-Z][a-z]+)\s*([.!?]*)$", sentence)
    if last is not None and is_name(last.group(1)):
        sentence = sentence[: last.start()] + last.group(2)
    return sentence.strip()


def _turn_memory(
    turn: Turn,
    *,
    position: int,
    speaker: str,
    other: str | None,
    names: set[str],
    answers: bool,
) -> _Said | None:
    kept = []
    for number, raw in enumerate(sentences(_body(turn))):
        sentence = _vocatives(raw.strip(), names)
        if sentence and _informative(sentence, names=names, answer=answers and number == 0):
            kept.append(sentence[:1].upper() + sentence[1:])
    if not kept:
        return None
    joined = " ".join(s if s[-1] in ".!" else s + "." for s in kept)
    resolved = resolve_relative_dates(joined, turn.occurred_at)
    text = attribute(resolved.text, speaker=speaker, other=other)
    text = re.sub(r"!+", ".", re.sub(r"\s+", " ", text)).strip()
    if speaker not in sentences(text)[0]:
        # An answer without a subject ("Researching agencies.", "No, no pets right now."):
        # whose it is must stand in the memory, before what follows names anyone.
        text = f"{speaker}: {text}"
    if turn.occurred_at is not None:
        text = f"{text} (said on {day_text(turn.occurred_at.astimezone(UTC).date())})"
    confidence = CONVERSATION_FACT - (
        HEDGE_PENALTY if _HEDGE.search(joined) and len(kept) == 1 else 0.0
    )
    day = datetime.combine(resolved.day, time(), tzinfo=UTC) if resolved.day is not None else None
    return _Said(text=text, position=position, confidence=round(confidence, 2), turn=turn, day=day)


def conversation_candidates(
    turns: Sequence[Turn], *, names: dict[str, str], injected: set[int]
) -> list[Candidate]:
    """One candidate per informative turn of a named conversation, near-duplicates merged."""
    people = set(names.values())
    said: list[_Said] = []
    asked = False
    for index, turn in enumerate(turns):
        if turn.role not in _PEOPLE_ROLES or index in injected:
            continue
        answers, asked = asked, turn.content.rstrip().endswith("?")
        speaker = names[turn.role]
        others = people - {speaker}
        found = _turn_memory(
            turn,
            position=index,
            speaker=speaker,
            other=next(iter(others)) if len(others) == 1 else None,
            names=people,
            answers=answers,
        )
        if found is not None:
            said.append(found)
    kept: list[_Said] = []
    for item in said:
        tokens = _tokens(item.text)
        if any(_jaccard(tokens, _tokens(other.text)) >= NEAR_DUPLICATE_JACCARD for other in kept):
            continue
        kept.append(item)
    return [
        Candidate(
            text=item.text,
            confidence=item.confidence,
            kind="fact",
            source_seqs=(item.turn.seq,) if item.turn.seq is not None else (),
            occurred_at=item.day or item.turn.occurred_at,
        )
        for item in kept
    ]
