"""A question about how an attribute of someone stands ("What is the user's current
occupation?", "Where does Maria live?") prefers, within the ranking's head, the memories that
state that attribute, as the change rules read them (:mod:`apps.extraction.changes`).

Without it a short memory that shares the question's register ("The user is dating Alex now.")
can outrank the job it asks about: neither BM25 ("occupation" is in neither) nor one sentence
vector tells a job from a partner. The best ``MEMORY_RECALL_ATTRIBUTE_FIRST`` head members
whose claims include the asked attribute (of the person the question names, or of the user
when it says "the user") go first, in their order (so one of them from deep in the head can
enter the results); the rest of the ranking keeps its order. Only questions about how things
stand are read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence

from django.conf import settings

from apps.extraction.changes import WRITER, states_attribute
from apps.extraction.state_questions import names_in

_THE_USER = re.compile(r"\bthe user\b", re.IGNORECASE)


def _asked_about(query: str) -> frozenset[str]:
    """Whose attribute the question asks for: the names it uses, else "the user" if it says so
    (told of in the third person, or in the user's own words: "I work at Deloitte"), else
    anyone (empty)."""
    names = frozenset(name.lower() for name in names_in(query))
    if not names and _THE_USER.search(query):
        return frozenset({"user", WRITER})
    return names


def prefer_stated_attribute(
    query: str,
    families: frozenset[str],
    ranked: Sequence[tuple[uuid.UUID, float]],
    texts: Mapping[uuid.UUID, str],
) -> list[tuple[uuid.UUID, float]]:
    """``ranked`` (``(id, score)``, best first: the fused head) with the best
    ``MEMORY_RECALL_ATTRIBUTE_FIRST`` of it that state one of the attribute ``families`` the
    question asks for (:func:`~apps.extraction.state_questions.asked_attributes`) moved to
    the front, in their order."""
    first = settings.MEMORY_RECALL_ATTRIBUTE_FIRST
    whose = _asked_about(query)
    stating = [
        index
        for index, (pk, _score) in enumerate(ranked)
        if pk in texts and states_attribute(texts[pk], families, whose)
    ][:first]
    if not stating:
        return list(ranked)
    moved = set(stating)
    return [ranked[index] for index in stating] + [
        item for index, item in enumerate(ranked) if index not in moved
    ]
