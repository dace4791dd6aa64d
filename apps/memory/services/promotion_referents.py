"""Promoted statements that name a pet or a person an earlier statement introduced say whose
it is (:mod:`apps.extraction.referents`): "Biscuit died last week" is kept as "The user's golden
retriever Biscuit died last week", which a question about the user's dog finds."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from apps.extraction.promotion.types import Candidate
from apps.extraction.referents import introduce_referents, mentioned_names, named_referents
from apps.memory.selectors import memory_texts_naming
from apps.tenancy.models import Tenant


def promotion_with_referents(
    *, tenant: Tenant, subject_id: str, candidates: Sequence[Candidate]
) -> list[Candidate]:
    """``candidates`` with each name that the subject's memories, or a statement of the same
    session, introduced said with its owner and kind."""
    names = sorted({name for candidate in candidates for name in mentioned_names(candidate.text)})
    if not names:
        return list(candidates)
    known = memory_texts_naming(tenant=tenant, subject_id=subject_id, names=names)
    referents = named_referents([*known, *(candidate.text for candidate in candidates)])
    if not referents:
        return list(candidates)
    resolved = []
    for candidate in candidates:
        text = introduce_referents(candidate.text, referents)
        changed = text != candidate.text
        resolved.append(dataclasses.replace(candidate, text=text) if changed else candidate)
    return resolved
