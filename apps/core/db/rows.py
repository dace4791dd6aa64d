"""Model instances from rows a hand-written statement selected, as Django's iterators build them.

``Model.from_db`` calls ``Model.__init__``, which sends ``pre_init`` and ``post_init`` and sets
each field through ``setattr``; on a twenty-five-column memory that is most of what reading
recall's ten winners costs in Python. When nothing listens to either signal, the instance it
builds is its ``__dict__`` (the fields' values under their attribute names, and a
``ModelState``), so that is what :func:`model_from_row` writes directly: the same instance,
deferred fields left out exactly as ``from_db`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

M = TypeVar("M", bound=Model)


def instances_are_plain(model: type[Model]) -> bool:
    """Whether building an instance of ``model`` runs nothing but setting its fields: no
    ``pre_init`` or ``post_init`` receiver (a file or generic relation field adds one)."""
    return not (pre_init.has_listeners(model) or post_init.has_listeners(model))


def model_from_row(
    model: type[M], *, using: str, attnames: Sequence[str], values: Sequence[Any], plain: bool
) -> M:
    """``model.from_db(using, attnames, values)``; without ``__init__`` when ``plain``
    (:func:`instances_are_plain`), for rows whose ``attnames`` are concrete fields' attribute
    names in the order of ``model._meta.concrete_fields`` (as ``from_db`` requires too)."""
    if not plain:
        return model.from_db(using, list(attnames), list(values))
    instance = model.__new__(model)
    state = ModelState()
    state.adding = False
    state.db = using
    instance.__dict__["_state"] = state
    instance.__dict__.update(zip(attnames, values, strict=True))
    return instance
