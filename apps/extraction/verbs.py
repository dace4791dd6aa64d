"""Verbs as a first-person sentence has them, in the third person: what the promotion
rewrite ("I prefer tabs" → "The user prefers tabs.") and the change rules ("I live in Boston"
read as "lives in Boston") both need."""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_UNCHANGED_VERBS = _words(
    "can can't cannot could couldn't will won't would wouldn't should shouldn't must "
    "mustn't may might shall"
)
#: Irregular past forms: "I got married" stays "got", not "gots". Of the verbs whose past is
#: also their present, only those a chat almost always tells as done are here ("I hurt my knee",
#: "I quit my job", "Tom and I split up"); "read", "put", "set" keep the present rewrite.
_IRREGULAR_PAST = _words(
    "was were went got had saw made took came gave found thought told felt left kept began "
    "ran bought brought caught taught sold sent spent built lost met paid said sat stood "
    "understood won wrote drove ate fell flew grew knew rode rose sang swam threw wore woke "
    "became chose forgot hid led lent lit meant slept spoke stuck struck swore tore wept did "
    "heard held drew dug fought fed forgave hung laid overcame rang sank shook shot slid spun "
    "stole stung swung broke hurt quit split"
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


def third_person_verb(verb: str) -> str:
    """The third-person present of a first-person verb as written: "prefer" → "prefers",
    "am" → "is", "study" → "studies"; a past form, a modal or a negation stays as it is."""
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
