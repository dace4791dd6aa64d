"""Questions about how things stand now, told apart from questions about an event.

"How many dogs does Andrew have?" asks for the current value of something that may have
changed; of two memories that tell it, the later is the answer. "When did Melanie go camping?"
asks about one event; the later of two similar memories is another event, not a newer value.
Recall orders the later of two near-identical memories first only for the first kind
(:mod:`apps.memory.selectors.recall.recency`), so the gate below is deliberately narrow:
a question must say outright that it asks about the present or about how something turned out.
"""

from __future__ import annotations

import functools
import re

from apps.extraction.changes import SINGLE_VALUED_KEYS

__all__ = [
    "asked_attributes",
    "asks_current_state",
    "asks_in_present",
    "asks_what_used_to_be",
    "names_in",
]

# Words that place a question in the present: "What book is Jon currently reading?"
_NOW = (
    r"\b(?:now|currently|current|these days|nowadays|still|anymore|any more|at the moment"
    r"|at present|presently|so far|to date|as of today)\b"
)
# How something turned out, or how far it has come.
_OUTCOME = r"\bwhat (?:became|has become) of\b|\bhow far along\b|\bwhat(?:'s| is) the status\b"
_ATTEMPT = r"^did [\w' ]+? (?:pass|fail|get|win|land|finish|complete|receive|recover|succeed)\b"
# A count of what someone has: "How many dogs does Maria have?"
_HOW_MANY = r"^how many [\w' -]+? (?:does|do) [\w' ]+? (?:have|own|keep)\b"
# A standing that changes over a life: "Is Evan married?", "Where does James live?"
_STANDING = (
    r"^(?:is|are) [\w' ]+? (?:married|single|together|engaged|divorced|separated|dating|"
    r"healed|pregnant|retired|employed|unemployed|vegan|vegetarian|allergic)\b"
    r"|^where (?:does|do) [\w' ]+? (?:live|work|stay)\b"
    r"|^who (?:does|do) [\w' ]+? live with\b"
    r"|^what (?:job|work|position|role|diet) (?:does|do) [\w' ]+? (?:have|do|hold|follow)\b"
    # "What does the user do for work?", "Which city does Sam live in?", "Is the user in a
    # relationship?", "Who is Ana dating?", "What does the user eat?", "Does Tom have a pet?".
    r"|^what (?:does|do) [\w' ]+? do for (?:a )?(?:work|living)\b"
    r"|^(?:which|what) (?:city|town|country|state|neighbou?rhood) (?:does|do) [\w' ]+? live\b"
    r"|^(?:is|are) [\w' ]+? (?:in a relationship|(?:seeing|with) (?:anyone|someone))\b"
    r"|^who (?:is|are) [\w' ]+? (?:dating|seeing|married to|engaged to|with)\b"
    r"|^what (?:does|do) [\w' ]+? eat\b"
    r"|^(?:does|do) [\w' ]+? have (?:a |an |any )?(?:pets?|dogs?|cats?|kids|children|allerg\w+|"
    r"partner|girlfriend|boyfriend|job|car)\b"
    r"|^(?:has|have) [\w' ]+? (?:come out|been released|finished|ended|started|healed|recovered)\b"
    # The progressive asks about now: "Is the user training for a marathon?"
    r"|^(?:is|are) (?:the user|the team|(?-i:[A-Z])[\w'’-]+(?: (?-i:[A-Z])[\w'’-]+)?) (?:still )?"
    r"(?!going to\b)[a-z]+ing\b"
)
# What someone uses for something, a value of theirs that is one thing at a time, or who holds
# a role: "Which database does the billing service use?", "What is Carol's email address?",
# "Who is the project manager?", "When is the launch?" ("did": an event, not a value).
_VALUE = (
    r"^(?:what|which) [\w' -]+? (?:does|do) [\w' -]+? (?:use|prefer|drive|run on)\b"
    r"|^(?:what|who|when) (?:is|are) (?:the user's|the team's|my|our|his|her|their|\w+'s) "
    rf"(?:(?:current|new) )?{SINGLE_VALUED_KEYS}\??$"
    r"|^who (?:is|are) the [\w -]+\??$"
    # A bare noun phrase: "when is the launch?", not a schedule ("… the standup on Fridays?").
    r"|^when (?:is|are) the [\w-]+(?: [\w-]+){0,2}\??$"
)
# A question in the simple present: "Does Sam drink coffee?", "Where is the office?",
# "What framework is the frontend built with?" — a habit or a description as often as a
# value that changed, so it counts as asking how things stand only of a memory that says
# something changed (``asks_in_present``).
_PRESENT = (
    r"^(?:(?:what|which|who|whom|where|how)(?: [\w'-]+){0,4}? )?(?:is|are|does|do)\b"
    r"(?! (?:it|there)\b)"
)
_STATE = re.compile(
    "|".join((_NOW, _OUTCOME, _ATTEMPT, _HOW_MANY, _STANDING, _VALUE)), re.IGNORECASE
)
_IN_PRESENT = re.compile(_PRESENT, re.IGNORECASE)


# A recall reads the same question here twice (the later-first gate, the asked attribute).
@functools.lru_cache(maxsize=256)
def asks_current_state(question: str) -> bool:
    """Whether ``question`` asks how something stands now or how it turned out."""
    return _STATE.search(question.strip()) is not None


@functools.lru_cache(maxsize=256)
def asks_in_present(question: str) -> bool:
    """Whether ``question`` asks in the simple present ("Which editor do I use?"): of two
    memories of one thing, the later answers it if it says the thing changed."""
    return _IN_PRESENT.search(question.strip()) is not None


# What held before and holds no longer: "Where did Maria use to work?", "What was the user's
# previous phone number?", "Where did he live before?" (a bare "before" at the end).
_USED_TO = re.compile(
    # "did … use to" only after where / who: "what did Nate use to make it?" is a tool.
    r"\b(?:used to|previous(?:ly)?|former(?:ly)?|originally|at first|in the past|"
    r"back then)\b|^(?:where|who) did [\w' ]+? use to\b|\bbefore\s*\?*$|"
    r"\b(?:my|his|her|their|our|its|the|\w+'s) old\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=256)
def asks_what_used_to_be(question: str) -> bool:
    """Whether ``question`` asks about a value that held before and was replaced since."""
    return _USED_TO.search(question.strip()) is not None


# A capitalised word after the first ("Where does Alice work?"), possessive or not.
_NAME = re.compile(r"(?<=\s)([A-Z][a-z]+)(?:'s)?\b")


def names_in(question: str) -> tuple[str, ...]:
    """The names a question asks about (capitalised words past its first), in order: the
    later of two memories answers for "Alice" only if both speak of Alice."""
    return tuple(dict.fromkeys(match.group(1) for match in _NAME.finditer(question.strip())))


# The attribute a question about how things stand asks for, as the change rules name their
# families (apps/extraction/changes): "What is the user's current occupation?" asks for a job.
_ATTRIBUTES = {
    frozenset({"employer", "role"}): (
        r"\b(?:occupation|job|jobs|career|profession|employer|employed|unemployed|"
        r"do for (?:a )?living|work|works|working)\b"
    ),
    frozenset({"residence"}): (
        r"\bwhere (?:does|do|is|are) [\w' ]+? (?:live|living|based|staying)\b|"
        r"\b(?:location|city|country|hometown|resides?)\b"
    ),
    frozenset({"household"}): r"\b(?:live|lives|living) (?:with|alone)\b|\broommates?\b",
    frozenset({"diet"}): r"\b(?:diet|vegetarian|vegan|pescatarian|eats? meat|eat)\b",
    frozenset({"condition"}): r"\b(?:allergic|allerg(?:y|ies)|diagnosed|condition)\b",
    frozenset({"relationship"}): (
        r"\b(?:relationship|married|single|dating|partner|girlfriend|boyfriend|spouse|husband|"
        r"wife|engaged|divorced)\b"
    ),
    frozenset({"pets"}): (
        r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|turtles?|fish|birds?|rabbits?|hamsters?)\b"
    ),
}
_ATTRIBUTE_PATTERNS = [
    (families, re.compile(pattern, re.IGNORECASE)) for families, pattern in _ATTRIBUTES.items()
]


def asked_attributes(question: str) -> frozenset[str]:
    """The attribute families (``employer``, ``residence``, …) a question about how things
    stand asks for; none for any other question."""
    if not asks_current_state(question):
        return frozenset()
    return frozenset(
        family
        for families, pattern in _ATTRIBUTE_PATTERNS
        if pattern.search(question)
        for family in families
    )
