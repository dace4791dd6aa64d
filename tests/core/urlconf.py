"""The project's URL patterns as (route, view callback) pairs, for tests that cover every
endpoint without listing them by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver


def walk(patterns: Any = None, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every pattern of ``patterns`` (default: the root URLconf) with its full route."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback
