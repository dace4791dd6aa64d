"""The Redis broker transport: a worker that loses Redis while it holds a task reconnects
instead of exiting, and the task it held is delivered again once Redis is back.

A private ``redis-server`` per test (so it can be stopped), with an append-only file so what
it held survives its restart.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery.worker.consumer.consumer import COLLECT_SOCKET_TIMEOUT, bound_open_broker_sockets
from kombu import Connection, Exchange, Queue  # type: ignore[attr-defined]
from kombu.common import ignore_errors

from tests.redis_server import RedisServer, private_redis

ROOT = Path(__file__).resolve().parents[2]
TRANSPORT = "apps.core.broker:RedisTransport"
TASKS = Queue("tasks", Exchange("tasks"), "tasks")
# What a worker's remote-control mailbox listens on: a broadcast queue on its own channel.
MAILBOX = Queue("mailbox", Exchange("mailbox", type="fanout"), auto_delete=True)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with private_redis(directory=tmp_path) as server:
        yield server


def _worker_connection(url: str, taken: list[Any]) -> Connection:
    """A connection in the state of a busy worker's: one task taken and not acknowledged (it
    runs, acks late), the task channel waiting on Redis for the next one, and a mailbox
    listening on a second channel."""
    connection = Connection(url, transport=TRANSPORT)
    with connection.Producer() as producer:
        producer.publish(
            {"task": "first"}, exchange=TASKS.exchange, routing_key="tasks", declare=[TASKS]
        )
    tasks = connection.Consumer(
        [TASKS], channel=connection.default_channel, callbacks=[lambda _b, m: taken.append(m)]
    )
    tasks.qos(prefetch_count=2)
    tasks.consume()
    mailbox = connection.Consumer(
        [MAILBOX], channel=connection.channel(), callbacks=[lambda _b, _m: None], no_ack=True
    )
    mailbox.consume()
    connection.drain_events(timeout=2)
    for _ in range(5):  # until nothing else arrives: the task channel now waits on Redis
        try:
            connection.drain_events(timeout=0.2)
        except TimeoutError:
            break
    return connection


def _lose_connection_as_a_worker_does(connection: Connection) -> None:
    """What Celery's consumer does when the broker goes away under it
    (``Consumer.on_connection_error_after_connected``): collect the connection, then close it,
    ignoring connection errors."""
    bound_open_broker_sockets(connection, COLLECT_SOCKET_TIMEOUT)
    with contextlib.suppress(Exception):  # as Celery does
        connection.collect(socket_timeout=COLLECT_SOCKET_TIMEOUT)
    ignore_errors(connection, connection.close)


def test_losing_redis_with_a_task_taken_is_a_connection_error_not_a_crash(redis_server):
    taken: list[Any] = []
    connection = _worker_connection(redis_server.url, taken)
    assert [message.payload for message in taken] == [{"task": "first"}]

    redis_server.stop()
    # kombu's own transport raises AttributeError here, which ends the worker.
    _lose_connection_as_a_worker_does(connection)


def test_the_task_taken_before_the_loss_is_delivered_again_once_redis_is_back(redis_server):
    taken: list[Any] = []
    _lose_connection_as_a_worker_does(_worker_connection(redis_server.url, taken))
    redis_server.stop()
    redis_server.start()

    redelivered: list[Any] = []
    with Connection(
        redis_server.url, transport=TRANSPORT, transport_options={"visibility_timeout": 1}
    ) as connection:

        def take(body: Any, message: Any) -> None:
            redelivered.append(body)
            message.ack()

        consumer = connection.Consumer([TASKS], callbacks=[take])
        consumer.consume()
        deadline = time.monotonic() + 15
        while not redelivered and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                connection.drain_events(timeout=0.5)
    assert redelivered == [{"task": "first"}]


@pytest.mark.parametrize(
    ("url", "transport"),
    [("redis://redis:6379/0", TRANSPORT), ("rediss://redis:6380/0", "None")],
)
def test_the_settings_pick_the_transport_from_the_broker_url(url, transport):
    # A fresh interpreter: the settings module reads the environment once, at import.
    printed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from config.settings.components import celery; print(celery.CELERY_BROKER_TRANSPORT)",
        ],
        env={**os.environ, "CELERY_BROKER_URL": url},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert printed.stdout.strip() == transport
