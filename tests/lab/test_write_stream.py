"""``memory_bench --write-stream`` against a live server: what it measures is what happened."""

import threading
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from django.db import connections

from apps.core.in_flight import subject_in_flight_slot
from apps.memory.models import Memory
from apps.memory.services import memory_backfill_embeddings
from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create, tenant_create
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
    assert stream["refused_in_flight"] >= 0
    assert burst["refused_in_flight"] >= 0
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


@pytest.mark.django_db(transaction=True)
def test_a_write_refused_for_the_agents_requests_in_flight_is_sent_again(live_server, settings):
    """A slow server keeps an agent's writes and its checker's recalls in flight together; the
    stream's client waits and sends the write again, as a client would, and counts it."""
    settings.SUBJECT_MAX_IN_FLIGHT = 1
    tenant = tenant_create(slug="bench-stream-held", name="held")
    key = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="stream-0").raw_key
    held = ExitStack()
    held.enter_context(subject_in_flight_slot(tenant_id=tenant.pk, subject_id="stream-0"))
    threading.Timer(0.5, held.close).start()

    client = write_stream._Client(live_server.url, key)
    try:
        memory_id = client.write("written once its agent's other request ended")
    finally:
        client.close()

    assert client.refused_in_flight >= 1
    assert Memory.objects.get(pk=memory_id).text == "written once its agent's other request ended"


def test_only_a_loopback_server_is_streamed_to():
    with pytest.raises(load_bench.LoadBenchRefused):
        write_stream.run(url="http://example.com:8000", rate=10, count=1)
