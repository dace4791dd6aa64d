"""Writes open their transactions one way, through ``apps.core.db.transactions``
(docs/architecture.md, "Transactions"). Only that module and the selectors (read-only
transactions for a server-side cursor or a ``SET LOCAL``) call ``transaction.atomic``."""

from __future__ import annotations

import ast
from pathlib import Path

APPS = Path(__file__).resolve().parents[1] / "apps"
HELPERS = APPS / "core" / "db" / "transactions.py"


def atomic_calls(source: str) -> list[int]:
    """The lines of ``source`` that use ``atomic`` (``transaction.atomic`` or a bare
    ``atomic``, called or as a decorator)."""
    return sorted(
        {
            node.lineno
            for node in ast.walk(ast.parse(source))
            if (isinstance(node, ast.Attribute) and node.attr == "atomic")
            or (isinstance(node, ast.Name) and node.id == "atomic")
        }
    )


def _is_selector(path: Path) -> bool:
    parts = path.relative_to(APPS).parts
    return "selectors" in parts or path.name == "selectors.py"


def test_the_scan_finds_atomic_blocks():
    source = (
        "with transaction.atomic(using=PRIMARY):\n    pass\n"
        "@atomic\ndef f(): pass\n"
        "with atomic(durable=True):\n    pass\n"
    )

    assert atomic_calls(source) == [1, 3, 5]


def test_only_the_transaction_helpers_and_selectors_open_atomic_blocks():
    offenders = {
        f"{path.relative_to(APPS)}:{line}"
        for path in APPS.rglob("*.py")
        if "migrations" not in path.parts and path != HELPERS and not _is_selector(path)
        for line in atomic_calls(path.read_text())
    }

    assert atomic_calls(HELPERS.read_text())  # the helpers are where the blocks open
    assert offenders == set()
