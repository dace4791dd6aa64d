"""``memory_bench --write-stream`` against a live server: what it measures is what happened."""

import threading
from collections.abc import Iterator

import pytest
from django.db import connections

from apps.memory.models import Memory
from apps.memory.services import memory_backfill_embeddings
from apps.tenancy.models import Tenant
from lab import load_bench, write_stream


@pytest.fixture
def embedding_worker() -> Iterator[None]:
    """Stands in for the Celery worker (the test broker delivers nothing): the service a drain
    runs, every 50 ms, on its own connection."""
    stop = threading.Event()

    def drain() -> None:
        try:
            while not stop.wait(0.05):
                memory_backfill_embeddings()
        finally:
            connections.close_all()

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=10)


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_a_stream_and_a_burst_are_measured_and_their_tenant_removed(
    live_server, embedding_worker, monkeypatch
):
    monkeypatch.setattr(write_stream, "SEARCHABLE_TIMEOUT_S", 30.0)
    monkeypatch.setattr(write_stream, "WRITES_PER_SUBJECT", 5)  # three agents a phase

    report = write_stream.run(url=live_server.url, rate=40, count=12, check_every=3)

    stream, burst = report["stream"], report["burst"]
    assert stream["writes"] == 12
    assert stream["agents"] == burst["agents"] == 3
    assert stream["keyword_checked"] == stream["keyword_findable"] == 4  # writes 0, 3, 6, 9
    assert stream["embedded"] == 12
    assert stream["semantic_found"] == 12  # each looked up with its own agent's key
    assert stream["rate_sent"] > 0
    assert stream["late_ms_p99"] >= stream["late_ms_p50"] >= 0
    assert stream["write_ms_p99"] >= stream["write_ms_p50"] > 0
    assert stream["embedded_ms_max"] >= stream["embedded_ms_p99"] >= stream["embedded_ms_p50"]
    assert stream["embedded_from_sent_ms_p50"] > stream["embedded_ms_p50"]  # the answer's wait
    assert burst["writes"] == burst["embedded"] == 12
    assert burst["last_keyword_findable_on_return"] is True
    assert burst["all_embedded_s_after_last_write"] is not None
    assert Tenant.objects.filter(slug__startswith="bench-stream-").count() == 0
    assert Memory.objects.count() == 0


def test_only_a_loopback_server_is_streamed_to():
    with pytest.raises(load_bench.LoadBenchRefused):
        write_stream.run(url="http://example.com:8000", rate=10, count=1)
