"""Product modules stay short enough to read in one sitting: over 450 lines, a module says on
its first line (``# length: <reason>``) why it is one file."""

from __future__ import annotations

from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"
LIMIT = 450
MARKER = "# length: "


def _modules() -> list[Path]:
    return sorted(path for path in APPS.rglob("*.py") if "migrations" not in path.parts)


def test_the_apps_have_modules_to_check():
    assert len(_modules()) > 100


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(APPS)))
def test_a_long_module_says_why_on_its_first_line(path: Path):
    lines = path.read_text().splitlines()
    if len(lines) <= LIMIT:
        return
    first = lines[0]
    assert first.startswith(MARKER), f"{len(lines)} lines and no '{MARKER}<reason>' first line"
    assert len(first[len(MARKER) :].strip()) >= 20, "the reason is too short to be one"
