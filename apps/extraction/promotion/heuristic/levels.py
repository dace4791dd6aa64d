"""Confidence levels, penalties and size/similarity thresholds, and the two tiny helpers
(``_rx``, ``_words``) every rule module builds its patterns and word sets with.

Kept apart so the numbers that decide what passes the gate can be read (and compared with
docs/promotion.md) in one place, without the regexes around them.
"""

from __future__ import annotations

import re

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
CONVERSATION_FACT = 0.7  # something a named speaker said in passing (event, plan, relation …)
PROFILE = 0.75  # who the speaker is or what changed: a job, a home, a diet, pets (profile.py)
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
#: Content words (filler and the speakers' names left out) a conversation sentence needs.
CONVERSATION_MIN_CONTENT_WORDS = 2

_I = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _rx(pattern: str, flags: int = _I) -> re.Pattern[str]:
    return re.compile(pattern, flags)
