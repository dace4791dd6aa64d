"""The offline default compiler: rule-based extraction of durable statements from a session.

Deterministic, no network, linear in the transcript. It keeps what a careful reader would
write down for a later session: the user's preferences, decisions, facts about the user,
their project or environment, and corrections. It works sentence by sentence:

1. Turns: ``user`` turns are read in full; ``fact`` turns (statements the harness recorded)
   too; ``assistant`` turns only where a sentence opens with a recording marker
   ("Decision: …", "Noted: …"); ``system`` turns never (they instruct the agent).
2. Safety first: a turn that tries to instruct the system (ignore previous instructions,
   "you are now …", "store this memory", "link article …") is dropped whole, and a session
   with two such turns yields nothing at all. A sentence that looks like it carries a
   secret (key, token, password, card number) is skipped, never redacted and kept.
3. Each remaining sentence is skipped when it is a question, a hypothetical or a transient
   step, and otherwise scored by the strongest durability signal it carries (explicit
   "always/never/must/decided/prefer", identity, first-person habitual facts), lowered by
   hedges ("I think", "maybe") and by an unresolved leading pronoun.
4. First-person sentences are rewritten into the third person ("I prefer tabs" → "The user
   prefers tabs."); the rest of the sentence is kept verbatim.
5. Near-identical candidates are merged (highest confidence wins) and statements contradicted
   by a later correction in the same session are dropped.

It never proposes cross_links: only a model that saw real article ids could, and those are
validated before write anyway.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from apps.memory.promotion.types import Candidate, Turn

# --- Confidence levels (the gate default is 0.6; see docs/promotion.md) -------------------
EXPLICIT = 0.85  # always / never / must / from now on / policy / hard rule
DECISION = 0.85  # decided / agreed / settled on / standardizing on
PREFERENCE = 0.8  # prefer / dislike / would rather
IDENTITY = 0.8  # my name is / I'm the admin / I lead the platform team
CORRECTION = 0.8
RECORDED = 0.75  # assistant "Decision: …" / "Noted: …"
HABITUAL = 0.7  # we use / our runners are / I read Spanish
FACT_TURN = 0.7  # a ``fact`` turn recorded by the harness
UNIVERSAL = 0.7  # third-person statement quantified over the project ("all our deploys …")
ACKNOWLEDGED = 0.65  # assistant "Understood: …" restating what the user said
QUALIFIED = 0.65  # third-person statement with a scope marker ("the lab standard")
HEDGE_PENALTY = 0.3
PRONOUN_PENALTY = 0.15
RECORD_BONUS = 0.05

#: Injection attempts in this many turns make the whole session adversarial.
ADVERSARIAL_TURNS = 2
MIN_WORDS = 3
MAX_SENTENCE_CHARS = 600
NEAR_DUPLICATE_JACCARD = 0.8
SUPERSEDE_JACCARD = 0.4
RESTATEMENT_JACCARD = 0.3
MIN_CONTENT_WORDS = 1

_I = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _rx(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# --- Injection --------------------------------------------------------------------------
_INJECTION = [
    _rx(
        r"\b(ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}"
        r"\b(instructions?|prompts?|rules|guidelines|directives)\b"
    ),
    _rx(r"\bsystem\s*(prompt|message|override|instructions?)\b"),
    _rx(r"\byou are now\b|\byou're now\b|\bfrom now on,? you\b|\byou will now\b"),
    _rx(r"\b(act|behave|respond) as (if|though|an? )\b|\bpretend (to be|you|that you)\b"),
    _rx(r"\brole-?\s?play\b|\blet'?s play a game\b|\bjailbreak\b|\bdeveloper mode\b"),
    _rx(r"\bas an ai\b|\blanguage model\b|\bdo anything now\b"),
    _rx(r"\bDAN\b", 0),
    _rx(
        r"\b(remember|memori[sz]e|store|save|persist|write down|note)\b[^.!?\n]{0,30}"
        r"\b(memory|memories|permanent(ly)?|forever|rule)\b"
    ),
    _rx(
        r"\byour (memory|memories|instructions|prompt|rules|guidelines)\b|\bmemory (system|bank)\b"
    ),
    _rx(r"\b(link|attach|cross-?link)\b[^.!?\n]{0,30}\barticles?\b"),
    _rx(
        r"\b(instructions?|message|note)s? (to|for) (the |this |any |all )?"
        r"(ai|assistant|model|llm|bot|agent)\b"
    ),
    _rx(r"\bnew (rules?|instructions?|directives?)\b"),
    _rx(r"<!--|-->|\b(memory|assistant|system)\.\w+\("),
    _rx(r"^\s*(system|assistant|developer)\s*:", _I | re.MULTILINE),
]
# "remember that …" / "store this" addressed to the system, at a sentence start (after an
# optional vocative such as "DAN,") or as a trailing ", save it".
_MEMORY_COMMAND = _rx(
    r"(^|[.!?]\s+|\n)\W*(\w+,\s*)?(please\s+)?(remember|memori[sz]e|store|save|note)"
    r"\s*(:|that\b|this\b|the following\b|my\b|it\b)"
    r"|,\s*(please\s+)?(save|store|remember|memori[sz]e) (it|this|that)\b"
)


def is_injection(text: str) -> bool:
    """True when ``text`` tries to instruct the system rather than state something."""
    return bool(_MEMORY_COMMAND.search(text)) or any(p.search(text) for p in _INJECTION)


# --- Secrets (spec "PII / secret stance": store a pointer, never the secret) --------------
_SECRET_PATTERNS = [
    _rx(r"\b(sk|pk|rk)[-_](live|test|proj)[-_]?[A-Za-z0-9_-]{8,}"),
    _rx(r"\bsk-[A-Za-z0-9_-]{16,}"),
    _rx(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_\w{20,}"),
    _rx(r"\bxox[abprs]-[\w-]{10,}|\bglpat-[\w-]{16,}|\bwhsec_\w{12,}|\bAIza[\w-]{30,}"),
    _rx(r"\bAKIA[0-9A-Z]{16}\b", 0),
    _rx(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{4,}"),
    _rx(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    _rx(
        r"\b(password|passwd|pwd|passphrase|passcode|pin|secret|token|api[_\s-]?key|"
        r"access[_\s-]?key|private[_\s-]?key|secret[_\s-]?key|signing[_\s-]?(secret|key)|"
        r"credentials?)\s*(is|was|=|:)\s*"
        r"(?!(in|stored|kept|under|at|located|managed|rotated|revoked|expired|invalid|missing|"
        r"wrong|required|needed|not|being|still|also|only|available|on|set|the same)\b)\S"
    ),
    _rx(r"\b[A-Z][A-Z0-9_]*(KEY|SECRET|TOKEN|PASSWORD|PASS|PWD)[A-Z0-9_]*\s*=\s*\S", 0),
    _rx(r"://[^/\s:@]+:[^/\s@]+@"),
    _rx(r"\b\d{3}-\d{2}-\d{4}\b"),
    _rx(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b", 0),
]
_OPAQUE_TOKEN = _rx(r"(?<![\w/.-])[A-Za-z0-9_+=-]{32,}(?![\w/.-])", 0)
_UUID = _rx(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_CARD = _rx(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def looks_secret(text: str) -> bool:
    """True when ``text`` seems to carry a credential, card number or similar."""
    if any(p.search(text) for p in _SECRET_PATTERNS):
        return True
    for token in _OPAQUE_TOKEN.findall(text):
        has_digit, has_alpha = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
        if has_digit and has_alpha and not _UUID.match(token.lower()):
            return True
    for match in _CARD.findall(text):
        digits = re.sub(r"\D", "", match)
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return True
    return False


# --- Sentence splitting ------------------------------------------------------------------
_FENCE = re.compile(r"(```|~~~).*?(\1|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_EMAIL_HEADER = _rx(r"^(from|to|cc|bcc|subject|date|sent|reply-to)\s*:")
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ABBREVIATIONS = _rx(
    r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|esp|dr|mr|mrs|ms|st|no|fig|et al|"
    r"u\.s|u\.k|a\.m|p\.m)\."
)
_PLACEHOLDER = "\x00{}\x00"
_RESTORE = re.compile("\x00(\\d+)\x00")


def sentences(text: str) -> list[str]:
    """Sentences of a turn: fenced code dropped, quoted and indented-code lines skipped,
    bullets and lines split, inline code spans kept intact."""
    text = _FENCE.sub("\n", text)
    spans: list[str] = []

    def _protect(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return _PLACEHOLDER.format(len(spans) - 1)

    out: list[str] = []
    for raw_line in text.splitlines():
        if raw_line.startswith(("    ", "\t")) and not _BULLET.match(raw_line):
            continue  # indented code
        line = _BULLET.sub("", raw_line.strip())
        if (
            not line
            or line.startswith(">")
            or set(line) <= set("-=*_ ")
            or _EMAIL_HEADER.match(line)
        ):
            continue
        line = _CODE_SPAN.sub(_protect, line)
        line = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x01"), line)
        for part in _SPLIT.split(line):
            part = part.strip().replace("\x01", ".")
            part = _RESTORE.sub(lambda m: spans[int(m.group(1))], part)
            if part:
                out.append(part)
    return out


# --- Sentence classification -------------------------------------------------------------
_LEADING = _rx(
    r"^(?:ok(?:ay)?|ugh|yes|yeah|yep|yup|oh|ah+|hmm+|hm|right|good|great|nice|perfect|cool|"
    r"thanks|thank you|sure|well|so|and|also|but|plus|btw|fwiw|by the way|lol|haha|hey|hi|"
    r"hello|anyway|alright|awesome|amazing|exactly|fair|indeed|honestly|basically|then|"
    r"one more(?: thing)?|one thing|careful|before we (?:start|begin)|quick one|"
    r"for the record|for future reference|just so you know|just fyi|fyi|note|"
    r"oh and|and also|wait|actually|no|correction|scratch that)\b[\s,:;!.]*"
)
_TRAILING = _rx(
    r"[\s,]*\b(btw|by the way|fwiw|though|lol|haha|please|thanks|if that matters|"
    r"in case (?:that|it) matters|in case that changes anything[^.]*)\W*$"
)
_RECORD_MARKER = _rx(
    r"\b(for the record|for future reference|just so you know|going forward|keep (that|this) "
    r"in mind)\b"
)
_CORRECTION_OPENER = _rx(
    r"^\W*(?:(?:wait|hmm+|oh|ah|no|um+|uh|ok|okay|sorry|oops|and|but|so|well)[,.!]?\s+){0,2}"
    r"(actually|correction|scratch that|i was wrong|i misspoke|"
    r"to correct)\b"
)
_NO_OPENER = _rx(r"^\W*no\s*[,.!]\s*\w")
_QUESTION_OPENER = _rx(
    r"^(what|why|how|when|where|which|who|whom|whose|can|could|would|should|shall|do|does|"
    r"did|is|are|was|were|will|won't|isn't|aren't|any idea|anything|have you|has)\b"
)
_HYPOTHETICAL = _rx(
    r"^(if|what if|suppose|supposing|imagine|assuming|hypothetically|in theory|let's say|"
    r"say we|unless)\b|\b(what if|i wonder|wondering (if|whether)|we could|we might|"
    r"could we|might be worth|would be nice|in an ideal world|at some point)\b"
)
_TRANSIENT = _rx(
    r"\b(let me|let's (see|look|check|try|do|start|stop|run|test|continue|begin|move|get)|"
    r"i'll|i will|i'm going to|we'll|we will|going to|gonna|i need to|i have to go|"
    r"need to go|right now|for now|at the moment|today|tonight|tomorrow|this morning|"
    r"this afternoon|yesterday|next session|next time|later|in a minute|in the morning|"
    r"doing that now|this time|last week|last night)\b"
)
_HEDGE = _rx(
    r"\b(i think|i believe|i guess|i suppose|i assume|maybe|probably|perhaps|possibly|might|"
    r"not sure|unsure|seems|seem to|kind of|sort of|presumably|apparently|i doubt)\b"
)
_EXPLICIT = _rx(
    r"\b(always|never|from now on|going forward|in future|in the future|as a rule|in general|"
    r"hard rule|hard requirement|policy|must|mustn't|required|requirement|requires|"
    r"mandatory|not allowed|don't allow|do not allow|forbidden|no exceptions|"
    r"automatic rejection|strict about|enforced|has to|have to|ever)\b"
)
_DECISION = _rx(
    r"\b(decided|agreed|we chose|settled on|standardi[sz]ing on|standardi[sz]ed on|"
    r"going with|went with|opted for|migrating (away|to|from)|switched to|"
    r"staying on)\b|^let's (go with|use|stick with|keep|standardi[sz]e)\b"
)
_PREFERENCE = _rx(
    r"\b(prefer|prefers|preferred|preference|dislike|dislikes|can't stand|would rather|"
    r"i'd rather|rather than|favou?rite|not a fan|only want|don't want|"
    r"do not want|works? best|more comfortable)\b"
    r"|\b(i|we)\s+(\w+ly\s+|also\s+|still\s+|don't\s+|do not\s+)?(like|love|hate|enjoy)\b"
)
# A statement whose object is only "this/that/it" ("I love this weather", "we always use
# that in the lab now") is about the moment or leans on context the memory will not have.
_DEIXIS = _rx(
    r"\b(like|love|hate|enjoy|prefer)s?\s+(this|that|it|these|those)\b"
    r"|\b(use|uses|do|does|follow|follows|keep|keeps|want|wants|need|needs|forget|forgets|"
    r"remember|remembers)\s+(this|that|it|these|those)\b"
    r"(?!\s+(?!(for|with|in|on|at|now|then|too|also|anyway|again|every|all)\b)[a-z]{3,})"
)
_LEADING_HEDGE = _rx(r"^(i think|i guess|i believe|i suppose|probably|maybe|perhaps),?\s+")
_UNIVERSAL = _rx(
    r"\b(every|everything|everyone|all (our|the|of|new)|any|anywhere|everywhere|whenever|"
    r"only)\b"
)
_QUALIFIED = _rx(
    r"\b(standard|convention|default|the rule|our rule|lab|"
    r"in this (codebase|repo|project|company|team))\b"
)
_IDENTITY = _rx(
    r"\b(my name is|call me|i'm called)\b"
    r"|\bi (lead|run|manage|own|head|work (at|on|for|in|from)|am responsible for)\b"
    r"|\b(i'm|i am) (a|an|the|on (the|an?)|at|from|based|in charge|part of|responsible|"
    r"(?-i:[A-Z][a-z]+)\b)"
    r"|\b(i'm|i am) ((pretty|very|quite|fairly|relatively|completely|totally)\s+)?"
    r"(blind|deaf|visually impaired|colou?r-?blind|new to|vegetarian|vegan|allergic|"
    r"left-handed|dyslexic|fluent)\b"
    r"|\b(i'm|i am) (writing|working on|doing) (my|a|an|our)\b[^.]*\b(thesis|dissertation|"
    r"paper|book|phd)\b"
    r"|\bfluently\b|\bnative speaker\b"
)
_FIRST_PERSON_FACT = _rx(
    r"(^|[,;]\s*|\b(and|so|but|everything|all|that|which|what)\s+)"
    r"(we|i)\s+((\w+ly|also|still|all|both|only|usually|always|never|mostly|mainly)\s+)?"
    r"(?!(think|guess|know|wonder|need|want|feel|hope|see|mean|forgot|forget|remember|"
    r"tried|try|just|can|could|would|will|should|might|may|was|were|did|had|got|get|keep|"
    r"said|say|asked|ask|told|tell|found|saw|meant|didn't|don't know|see|checked|ran|"
    r"looked|wanted|thought|needed|have|has|am|'m|'ll|'d|ll|d|don|doesn|didn|can|won|isn|"
    r"aren|wasn)\b)"
    r"(?!\w+ed\b)(\w+|'re|are)\b"
    r"|^(our|my)\s+(\S+\s+){0,4}?(is|are|was|were|has|have|does|do|can|will|must|should|"
    r"\w+s)\b"
    r"|\b(we're|we are) (on|in|at|using|based|a|an|the|staying|running|migrating|moving|"
    r"standardi[sz]ing|building)\b"
    r"|\b(i'm|i am) using\b"
    r"|\b(is|are|\w's)\b[^.]*\b(our|my)\b"
)
_IMPERATIVE = _rx(
    r"^please\b|^(do not|don't|never|always|avoid|use|run|fix|open|add|show|try|go|send|"
    r"make|check|put|pull|exclude|code|reverse|start|ship|merge|leave|keep|write|explain|"
    r"give|tell|look|find|help|let|create|delete|remove|update|change|move|set|call|email|"
    r"copy|paste|test|build|install|upgrade|push|commit|stop|wait|read|print|plot|drop|"
    r"flag|mark|note|shorten|replace|rename|apply|include|ask|be|get|take|cc|reply|"
    r"respond|answer|summari[sz]e|draft|format)\b"
)
_NEGATIVE_IMPERATIVE = _rx(r"^(please\s+)?(do not|don't|never|avoid)\b")
_LEADING_PRONOUN = _rx(
    r"^(it|it's|they|they're|this|that|that's|these|those|he|she|them|there|"
    r"(after|before|besides|other than|apart from|except for) (that|this|it|those))\b"
)
# Problem reports describe what the session is fixing, not a durable fact.
_PROBLEM = _rx(
    r"\b(fail(s|ing|ed)?|broken|break(s|ing)?|crash(es|ing|ed)?|stuck|leak(s|ing)?|eating|"
    r"not working|doesn't work|stopped|keeps? (failing|crashing|getting)|can't|cannot|"
    r"unable|isn't|aren't|is down|slow(ly)?|takes? (too long|\d+ (minutes|hours)))\b"
)
_CONTENT_STOPWORDS = _words(
    "always never every all any only please keep mind going forward rule hard requirement "
    "policy must should use uses used forget forgets want wants need needs like likes do "
    "does did is are be been get gets make makes go goes now then there here also just "
    "really very one thing big"
)
_NEGATED_VALUE = _rx(r"(?:,\s*not|\binstead of|\brather than)\s+(?:the\s+|a\s+|an\s+)?([\w.:/+-]+)")


def _strip_leading(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _LEADING.sub("", text, count=1).lstrip(" ,;:")
    return text


def _strip_trailing(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING.sub("", text).rstrip(" ,;:")
    return text


def _trim_clauses(text: str) -> str:
    """Drop trailing clauses that are transient, hedged or questions ("…, so I'll keep it",
    "I use Zotero, can you give me BibTeX?")."""
    clauses = re.split(r"(,\s+|;\s+)", text)
    kept = clauses[0]
    asks = text.rstrip().endswith("?")
    for separator, clause in zip(clauses[1::2], clauses[2::2], strict=True):
        if (
            _TRANSIENT.search(clause)
            or _HEDGE.search(clause)
            or (asks and _QUESTION_OPENER.match(_strip_leading(clause)))
            or clause.rstrip().endswith("?")
        ):
            break
        kept += separator + clause
    return kept


# --- Third-person rewrite ----------------------------------------------------------------
_ADVERBS = (
    "really|always|never|usually|generally|also|only|mostly|just|still|both|definitely|"
    "strongly|actually|normally|typically|mainly|often|sometimes|rarely|already|even|"
    "totally|absolutely|honestly|basically|currently|now|personally|all|maybe|probably|perhaps|"
    "possibly"
)
_UNCHANGED_VERBS = _words(
    "can can't cannot could couldn't will won't would wouldn't should shouldn't must "
    "mustn't may might shall"
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
    past = lower.endswith("ed") and not lower.endswith("eed")
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


# --- Extraction --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Statement:
    text: str
    confidence: float
    kind: str
    position: tuple[int, int]
    #: An assistant acknowledgement ("Understood: …") that restates the previous user turn.
    acknowledgement: bool = False


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
            return EXPLICIT, "preference" if first_singular else "decision"
        if _PREFERENCE.search(low):
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
    text = third_person(_LEADING_HEDGE.sub("", body), addressee_is_user=addressee_is_user)
    if not text or _content_words(text) < MIN_CONTENT_WORDS:
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


_STOPWORDS = _words(
    "a an the is are was were be to of in on at for and or but with by from as it its this "
    "that these those so not no than"
)
_PRONOUNS = _words("user user's team team's they them their it its he she")
_SUFFIXES = ("'s", "ing", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9.+/'-]*[a-z0-9]|[a-z0-9]", text.lower())
    return {_stem(word) for word in words} - _STOPWORDS


def _jaccard(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left and right else 0.0


def _superseded(statements: list[_Statement]) -> list[_Statement]:
    """Drop statements contradicted by a later correction in the same session."""
    kept = list(statements)
    for correction in statements:
        if correction.kind != "correction":
            continue
        negated = {
            _stem(value.lower().rstrip(".,")) for value in _NEGATED_VALUE.findall(correction.text)
        }
        corrected = _tokens(correction.text)
        kept = [
            statement
            for statement in kept
            if statement.position >= correction.position
            or not (
                negated & _tokens(statement.text)
                or _jaccard(corrected, _tokens(statement.text)) >= SUPERSEDE_JACCARD
            )
        ]
    return kept


def _restated(statement: _Statement, statements: list[_Statement]) -> bool:
    """An acknowledgement that repeats something the user said in the turn just before."""
    if not statement.acknowledgement:
        return False
    tokens = _tokens(statement.text)
    return any(
        other.position[0] == statement.position[0] - 1
        and _jaccard(tokens, _tokens(other.text)) >= RESTATEMENT_JACCARD
        for other in statements
    )


def _deduplicated(statements: list[_Statement]) -> list[_Statement]:
    """Merge near-identical statements, keeping the most confident (earliest on a tie)."""
    kept: list[_Statement] = []
    for statement in statements:
        if _restated(statement, statements):
            continue
        tokens = _tokens(statement.text)
        for index, other in enumerate(kept):
            if _jaccard(tokens, _tokens(other.text)) >= NEAR_DUPLICATE_JACCARD:
                if statement.confidence > other.confidence:
                    kept[index] = statement
                break
        else:
            kept.append(statement)
    return kept


def extract_candidates(turns: Sequence[Turn]) -> list[Candidate]:
    """Durable statements in ``turns`` with a rule-based confidence, in session order."""
    injected = {
        index
        for index, turn in enumerate(turns)
        if turn.role in ("user", "fact") and is_injection(turn.content)
    }
    if len(injected) >= ADVERSARIAL_TURNS:
        return []
    statements: list[_Statement] = []
    answered_question = False
    for index, turn in enumerate(turns):
        if turn.role == "system" or index in injected:
            continue
        if turn.role in ("user", "fact", "assistant"):
            statements.extend(
                _turn_statements(turn, index=index, answered_question=answered_question)
            )
        if turn.role == "assistant":
            answered_question = turn.content.rstrip().endswith("?")
    return [
        Candidate(text=s.text, confidence=s.confidence, kind=s.kind)
        for s in _deduplicated(_superseded(statements))
    ]
