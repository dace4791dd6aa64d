"""The live-row quota under real concurrency: separate connections racing on one subject."""

import pytest

from apps.memory.exceptions import QuotaExceeded
from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_remember
from tests.concurrency import Race, race

WRITERS = 24
QUOTA = 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_stop_exactly_at_the_quota(tenant, settings, mocker):
    settings.MEMORY_QUOTA_LIVE_ROWS = QUOTA
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")

    raced = race(
        lambda index: memory_remember(
            tenant=tenant, subject_id="racer", draft=MemoryDraft(text=f"m{index}")
        ),
        writers=WRITERS,
        refused_by=QuotaExceeded,
    )

    assert raced == Race(written=QUOTA, refused=WRITERS - QUOTA)
    assert Memory.objects.filter(tenant=tenant, subject_id="racer").count() == QUOTA
