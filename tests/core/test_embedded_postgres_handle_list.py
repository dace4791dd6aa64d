"""A process killed while pgserver rewrote its process list must not keep `make run` down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pgserver.utils import DiskList

from apps.core.embedded_postgres import HANDLE_LIST, discard_unreadable_handle_list


@pytest.mark.parametrize("content", ["", "[123, 45", "\x00\x00"])
def test_an_unreadable_list_is_removed_so_pgserver_can_start(tmp_path: Path, content: str):
    (tmp_path / HANDLE_LIST).write_text(content)
    with pytest.raises(json.JSONDecodeError):  # what every start then failed with
        DiskList(tmp_path / HANDLE_LIST).get_and_add(1)

    assert discard_unreadable_handle_list(tmp_path) is True

    DiskList(tmp_path / HANDLE_LIST).get_and_add(1)
    assert DiskList(tmp_path / HANDLE_LIST).get() == [1]


def test_a_readable_or_missing_list_is_left_alone(tmp_path: Path):
    assert discard_unreadable_handle_list(tmp_path) is False
    (tmp_path / HANDLE_LIST).write_text(json.dumps([123]))

    assert discard_unreadable_handle_list(tmp_path) is False
    assert json.loads((tmp_path / HANDLE_LIST).read_text()) == [123]
