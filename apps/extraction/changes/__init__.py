"""Facts that change: what a memory says about an attribute of someone, and whether a newer
memory states another value for it (the offline change detector,
``apps.memory.services.changes``).

Pure and deterministic: text in, claims out. A *claim* is one sentence's statement of an
attribute of an entity ("Andrew has no pets" → entity ``andrew``, attribute ``pets``, value
``0``). Two claims about the same entity and attribute either agree or state different values;
only the second is a change. The rules keep precision before recall: a sentence that hedges,
plans, asks or reports someone else's words makes no claim, and an attribute the rules do not
know makes none either, so an unchanged fact is never retired by a paraphrase of itself.

* :mod:`.text` — sentences, the speaker of a conversation memory, the subject of a sentence;
* :mod:`.patterns` — the attribute rules (employment, residence, diet, relationship, pets,
  health, activities, test results, tools and settings, decisions, "no longer");
* :mod:`.fields` — the keys that hold one value, and a note's field ("Location: Berlin");
* :mod:`.keys` — a key's value ("my favourite colour is …", "the upload limit was raised to …");
* :mod:`.claims` — :func:`extract_claims`: a memory's text → its claims;
* :mod:`.kinds` — which tools are of one kind (two databases, two editors);
* :mod:`.compare` — :func:`conflict`: whether two claims state different values;
* :mod:`.search` — :func:`search_words`: the words that find the memories a claim could be
  about.
"""

from __future__ import annotations

from apps.extraction.changes.claims import Claim, extract_claims, states_attribute
from apps.extraction.changes.compare import conflict
from apps.extraction.changes.fields import SINGLE_VALUED_KEYS, field_label
from apps.extraction.changes.patterns import ALIVE
from apps.extraction.changes.search import search_words
from apps.extraction.changes.text import WRITER

__all__ = [
    "ALIVE",
    "SINGLE_VALUED_KEYS",
    "WRITER",
    "Claim",
    "conflict",
    "extract_claims",
    "field_label",
    "search_words",
    "states_attribute",
]
