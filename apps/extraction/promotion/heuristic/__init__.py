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

One module per stage:

* :mod:`.levels` — confidence levels, penalties and thresholds (the numbers behind the gate);
* :mod:`.safety` — the hard filters: instruction injection and secrets;
* :mod:`.splitting` — a turn's text cut into sentences;
* :mod:`.patterns` — the classification rules (questions, hedges, durability signals …);
* :mod:`.rewrite` — the third-person rewrite;
* :mod:`.similarity` — tokens, stemming and Jaccard similarity;
* :mod:`.scoring` — one sentence → a scored, rewritten statement; which turns are read;
* :mod:`.extractor` — :func:`extract_candidates`: the session pass, supersede and dedupe.
"""

from __future__ import annotations

from apps.extraction.promotion.heuristic.extractor import extract_candidates
from apps.extraction.promotion.heuristic.rewrite import third_person
from apps.extraction.promotion.heuristic.splitting import sentences

__all__ = ["extract_candidates", "sentences", "third_person"]
