"""The live-row quota under real concurrency: separate connections racing on one subject."""

import threading

import pytest
from django.db import connection

from apps.memory.exceptions import QuotaExceeded
from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_remember

WRITERS = 24
QUOTA = 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_stop_exactly_at_the_quota(tenant, settings, mocker):
    settings.MEMORY_QUOTA_LIVE_ROWS = QUOTA
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    start = threading.Barrier(WRITERS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def write(index: int) -> None:
        try:
            start.wait()
            memory_remember(tenant=tenant, subject_id="racer", draft=MemoryDraft(text=f"m{index}"))
            result = "written"
        except QuotaExceeded:
            result = "refused"
        finally:
            connection.close()  # each thread had its own connection
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count("written") == QUOTA
    assert outcomes.count("refused") == WRITERS - QUOTA
    assert Memory.objects.filter(tenant=tenant, subject_id="racer").count() == QUOTA
