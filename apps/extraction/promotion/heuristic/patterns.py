"""The sentence-classification rules: the regexes and word lists that decide whether a
sentence is a question, hypothetical, transient step, hedge or problem report, and which
durability signal (explicit, decision, preference, identity, habitual fact …) it carries,
plus the helpers that strip filler and trailing clauses before scoring.

Only patterns live here; how they combine into a confidence is in :mod:`.scoring`.
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _rx, _words

# --- Sentence classification -------------------------------------------------------------
_LEADING = _rx(
    r"^(?:ok(?:ay)?|ugh|yes|yeah|yep|yup|oh|ah+|hmm+|hm|right|good|great|nice|perfect|cool|"
    r"thanks|thank you|sure|well|so|and|also|but|plus|btw|fwiw|by the way|lol|haha|hey|hi|"
    r"hello|anyway|alright|awesome|amazing|exactly|fair|indeed|honestly|basically|then|"
    r"one more(?: thing)?|one thing|careful|before we (?:start|begin)|quick one|"
    r"for the record|for future reference|just so you know|just fyi|fyi|note|"
    r"heads up(?: that)?|"
    r"oh and|and also|wait|actually|no|correction|scratch that|"
    # A label before the user's own words: "A bit about me so you have context: I teach …".
    r"[a-z]+(?: [a-z]+){0,7}(?=:\s+(?:i|i'm|i’m|i've|my|we|our)\b))\b[\s,:;!.]*"
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
#: What leads into the news rather than telling it: "Speaking of which, I've got some awesome
#: news -- I adopted another pup" tells "I adopted another pup".
LEAD_IN = _rx(
    r"^(?:(?:speaking of which|by the way|btw|anyway|anyways|guess what|fun fact)\s*[,:!.-]+\s*"
    r"|(?:i['’]ve got|i have|i got)\s+(?:some\s+)?(?:[a-z]+\s+)?news\s*(?:--|—|–|:|,|!)\s*)+"
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
