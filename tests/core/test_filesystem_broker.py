"""The default filesystem broker: a consumer never sees a message before it is whole."""

from queue import Empty

import pytest
from kombu.connection import Connection

from apps.core import broker


@pytest.fixture
def channel(tmp_path):
    queue = tmp_path / "queue"
    queue.mkdir()
    connection = Connection(
        "filesystem://",
        transport="apps.core.broker:FilesystemTransport",
        transport_options={
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "control_folder": str(tmp_path / "control"),
        },
    )
    yield connection.default_channel
    connection.release()


def test_a_message_is_invisible_until_it_is_whole(channel, monkeypatch):
    seen_mid_write = []
    write = broker.write_message

    def write_half_then_look(path, data):
        with open(path, "wb") as handle:
            handle.write(data[: len(data) // 2])
        try:
            seen_mid_write.append(channel._get("celery"))
        except Empty:
            seen_mid_write.append(None)
        write(path, data)

    monkeypatch.setattr(broker, "write_message", write_half_then_look)

    channel._put("celery", {"body": "x" * 10_000})

    assert seen_mid_write == [None]
    assert channel._get("celery") == {"body": "x" * 10_000}
    assert channel._size("celery") == 0


def test_every_message_comes_out_once_and_no_staging_file_is_left(channel, tmp_path):
    for index in range(3):
        channel._put("celery", {"n": index})

    assert sorted(channel._get("celery")["n"] for _ in range(3)) == [0, 1, 2]
    assert list((tmp_path / "queue").iterdir()) == []


def test_the_default_broker_is_this_transport_and_polls_often():
    # Test settings swap in the in-memory broker; the defaults `make run` gets are these.
    from config.settings.components import celery

    if celery.CELERY_BROKER_URL != "filesystem://":
        pytest.skip("CELERY_BROKER_URL is set in this environment")
    assert celery.CELERY_BROKER_TRANSPORT == "apps.core.broker:FilesystemTransport"
    # A worker notices a new message at most this long after it was renamed into place.
    assert celery.CELERY_BROKER_TRANSPORT_OPTIONS["polling_interval"] <= 0.1
