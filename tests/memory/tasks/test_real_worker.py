"""A real Celery worker process embeds a committed memory (DESIGN §8: queue tests use a worker).

The worker runs as a separate `celery worker` process against this test's database, once over
Redis on 127.0.0.1:6379 (the production broker) and once over the filesystem broker that
`make run` uses by default.
"""

import time
from pathlib import Path

import pytest
from celery import Celery

from apps.memory.models import EmbeddingWake, Memory
from apps.memory.services import MemoryDraft, memory_remember
from tests.memory.tasks.worker_process import redis_answers, start_worker

REDIS_URL = "redis://127.0.0.1:6379/15"
WORKER_TIMEOUT_S = 90


@pytest.fixture(params=["redis", "filesystem"])
def broker(request: pytest.FixtureRequest, tmp_path: Path) -> dict:
    if request.param == "redis":
        if not redis_answers():
            pytest.skip("Redis is not answering on 127.0.0.1:6379 (.ci/run starts it)")
        return {
            "url": REDIS_URL,
            "env": {"CELERY_BROKER_URL": REDIS_URL},
            "options": {},
            "transport": None,
        }
    data_dir = tmp_path / "engram-data"
    queue = data_dir / "broker" / "queue"
    queue.mkdir(parents=True)
    (data_dir / "broker" / "processed").mkdir()
    (data_dir / "broker" / "control").mkdir()
    return {
        "url": "filesystem://",
        "env": {"CELERY_BROKER_URL": "filesystem://", "ENGRAM_DATA_DIR": str(data_dir)},
        "options": {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "processed_folder": str(data_dir / "broker" / "processed"),
            "control_folder": str(data_dir / "broker" / "control"),
        },
        # What web processes publish with by default (messages renamed into place whole).
        "transport": "apps.core.broker:FilesystemTransport",
    }


def _producer(broker: dict) -> Celery:
    # Not the current app: shared tasks the test process sends must keep using its own broker.
    producer = Celery("probe", broker=broker["url"], set_as_current=False)
    producer.conf.broker_transport_options = broker["options"]
    if broker["transport"]:
        producer.conf.broker_transport = broker["transport"]
    return producer


def _wait_until_embedded(worker, queryset, count: int) -> None:
    deadline = time.monotonic() + WORKER_TIMEOUT_S
    while time.monotonic() < deadline:
        if queryset.filter(embedding__isnull=False).count() >= count:
            return
        assert worker.poll() is None, "the worker exited early"
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_worker_process_embeds_a_committed_memory(tenant, broker):
    # The on-commit enqueue goes to this process's in-memory broker, which nothing consumes;
    # the worker gets the task through the real broker below.
    memory = memory_remember(
        tenant=tenant, subject_id="a", draft=MemoryDraft(text="embedded by a real worker")
    )
    worker = start_worker(**broker["env"])
    try:
        _producer(broker).send_task("memory.embed_memories", args=[[str(memory.pk)]])
        _wait_until_embedded(worker, Memory.objects.filter(pk=memory.pk), 1)
    finally:
        worker.terminate()
        worker.wait(timeout=20)

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.embedding is not None
    assert stored.embedded_at is not None


@pytest.mark.django_db(transaction=True)
def test_one_drain_task_embeds_a_burst_of_single_writes(tenant, broker):
    # 150 writes, each its own transaction: they woke one drain between them (the marker
    # held every later wake back), and that one task, run by a real worker, embeds them all.
    for index in range(150):
        memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text=f"fact {index}"))
    assert EmbeddingWake.objects.filter(tenant=tenant).exists()
    worker = start_worker(**broker["env"])
    try:
        _producer(broker).send_task("memory.drain_embeddings", args=[str(tenant.pk)])
        _wait_until_embedded(worker, Memory.objects.filter(tenant=tenant), 150)
    finally:
        worker.terminate()
        worker.wait(timeout=20)

    assert Memory.objects.filter(tenant=tenant, embedding__isnull=True).count() == 0
    assert not EmbeddingWake.objects.filter(tenant=tenant).exists()
