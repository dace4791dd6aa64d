"""The one input contract for client text (DESIGN §6: bad input is a 4xx before any side effect).

Every string a client sends — JSON keys and values at any depth, query parameters, the URL
path — must be text Postgres can store and a provider can encode: no NUL (Postgres refuses it
in text and jsonb) and no lone UTF-16 surrogate (JSON's ``"\\ud800"`` decodes to one; it has no
UTF-8 encoding, so every encoder downstream would fail on it). JSON bodies are also bounded
in size and nesting depth. The body parser and :class:`InputContractMiddleware` apply it,
so no view re-checks it.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from apps.core.exceptions import CoreErrorCode, ValidationFailed

# NUL, and the surrogate block (U+D800–U+DFFF), which valid text never holds on its own.
_FORBIDDEN = re.compile("[\x00\ud800-\udfff]")


class InvalidText(ValidationFailed):
    default_code: str = CoreErrorCode.INVALID_TEXT


class JsonTooDeep(ValidationFailed):
    default_code: str = CoreErrorCode.JSON_TOO_DEEP


def has_forbidden_characters(text: str) -> bool:
    return _FORBIDDEN.search(text) is not None


def _describe(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)[1:] or "$"


def check_text(text: str, *, location: str, name: str) -> None:
    if has_forbidden_characters(text):
        raise InvalidText(
            f"{name} holds a NUL character or an unpaired surrogate.",
            details={"location": location, "field": name},
        )


def check_json_tree(data: Any) -> None:
    """Refuse forbidden characters in any key or string value, and nesting past the bound.

    Iterative, so the walk itself cannot exhaust the stack whatever the document's shape.
    """
    max_depth = settings.REQUEST_JSON_MAX_DEPTH
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(data, 1, ())]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, str):
            if has_forbidden_characters(value):
                _refuse_text(path)
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > max_depth:
            raise JsonTooDeep(
                f"JSON nests deeper than {max_depth} levels.",
                details={"max_depth": max_depth, "at": _describe(path)},
            )
        if isinstance(value, dict):
            for key, item in value.items():
                if has_forbidden_characters(key):
                    _refuse_text((*path, key))
                stack.append((item, depth + 1, (*path, key)))
        else:
            stack.extend((item, depth + 1, (*path, index)) for index, item in enumerate(value))


def _refuse_text(path: tuple[str | int, ...]) -> None:
    where = _describe(tuple(_printable(part) for part in path))
    raise InvalidText(
        f"{where} holds a NUL character or an unpaired surrogate.",
        details={"location": "body", "field": where},
    )


def _printable(part: str | int) -> str | int:
    if isinstance(part, int):
        return part
    return part.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
