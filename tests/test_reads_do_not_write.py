"""The HTTP layer and the selectors never write rows themselves: every write goes through a
service (docs/architecture.md, "Apps and the direction of dependencies"). import-linter keeps
selectors from importing services; this scan keeps either layer from calling the ORM's write
methods directly."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"
# Always a write, whatever the receiver.
WRITE_METHODS = {"save", "bulk_create", "bulk_update", "get_or_create", "update_or_create"}
# A write when called on a manager or queryset (``dict.update`` and friends are not).
QUERYSET_WRITE_METHODS = {"create", "update", "delete"}
QUERYSET_HINTS = ("objects", ".filter(", ".exclude(", ".all(", "_set.", "queryset")


def orm_writes(source: str) -> list[str]:
    """Every call in ``source`` that writes through the ORM, as ``line: call``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = ast.unparse(node.func.value)
        method = node.func.attr
        if method in WRITE_METHODS or (
            method in QUERYSET_WRITE_METHODS and any(hint in receiver for hint in QUERYSET_HINTS)
        ):
            found.append(f"{node.lineno}: {receiver}.{method}()")
    return found


def _read_only_modules() -> list[Path]:
    layers = [*APPS.glob("*/apis.py"), *APPS.glob("*/apis/*.py"), *APPS.glob("*/selectors.py")]
    layers += APPS.glob("*/selectors/**/*.py")
    return sorted(layers)


def test_the_scan_finds_orm_writes():
    source = (
        "Memory.objects.filter(pk=1).update(text='x')\n"
        "memory.save()\n"
        "Article.objects.create(title='t')\n"
        "meta.update({'a': 1})\n"
    )

    assert orm_writes(source) == [
        "1: Memory.objects.filter(pk=1).update()",
        "2: memory.save()",
        "3: Article.objects.create()",
    ]


def test_there_are_read_only_modules_to_scan():
    assert len(_read_only_modules()) > 20


@pytest.mark.parametrize("path", _read_only_modules(), ids=lambda path: str(path.relative_to(APPS)))
def test_apis_and_selectors_write_nothing_themselves(path: Path):
    assert orm_writes(path.read_text()) == []
