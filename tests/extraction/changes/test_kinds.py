import pytest

from apps.extraction.changes.kinds import tool_kind


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("PostgreSQL", "database"),
        ("PostgreSQL 15", "database"),
        ("the VS Code", "editor"),
        ("Vue v3", "frontend framework"),
        ("fly.io", "hosting"),
        ("pnpm", "javascript package manager"),
        ("pip", "python package manager"),
    ],
)
def test_a_tools_name_tells_its_kind(value, kind):
    assert tool_kind(value) == kind


@pytest.mark.parametrize("value", ["Paris", "spring", "Hard Fork", "day shifts", "Edge", ""])
def test_a_place_an_everyday_word_or_an_unknown_name_has_no_kind(value):
    assert tool_kind(value) is None
