"""Heavy-read slots per subject under the tenant's cap: a noisy agent holds at most its share,
and a quiet agent of the same tenant still gets a slot, under concurrent readers too; a
shed recall degrades for the noisy agent only."""

import threading
from collections.abc import Iterator

import pytest

from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.memory.selectors import memory_recall
from tests.memory.factories import memory_row
from tests.redis_server import redis_as_the_shared_cache

READERS = 24


@pytest.fixture(params=["process memory", "redis"])
def shared_cache(request, settings, monkeypatch) -> Iterator[None]:
    """The slots counted as a single process counts them, and as production does (Redis)."""
    if request.param == "redis":
        with redis_as_the_shared_cache(settings, monkeypatch):
            yield
    else:
        yield


@pytest.mark.usefixtures("shared_cache")
def test_a_subject_past_its_share_is_shed_and_holds_no_tenant_slot(settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 3
    settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = 2

    noisy = {"tenant_id": "t", "subject_id": "noisy"}
    with heavy_read_slot(**noisy), heavy_read_slot(**noisy):
        with pytest.raises(HeavyReadShed) as shed, heavy_read_slot(**noisy):
            pass
        assert shed.value.scope == "subject"
        # The refused read took no tenant slot: the quiet agent gets the third.
        with heavy_read_slot(tenant_id="t", subject_id="quiet"):
            with (
                pytest.raises(HeavyReadShed) as full,
                heavy_read_slot(tenant_id="t", subject_id="b"),
            ):
                pass
            assert full.value.scope == "tenant"
        with heavy_read_slot(tenant_id="other-tenant", subject_id="noisy"):
            pass


@pytest.mark.usefixtures("shared_cache")
def test_slots_are_released_on_the_way_out(settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1
    settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = 1
    for _ in range(3):
        with heavy_read_slot(tenant_id="t", subject_id="a"):
            pass
    with pytest.raises(RuntimeError), heavy_read_slot(tenant_id="t", subject_id="a"):
        raise RuntimeError

    with heavy_read_slot(tenant_id="t", subject_id="b"):
        pass


def test_concurrent_readers_leave_the_quiet_subject_its_slots(settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 10
    settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = 6
    start = threading.Barrier(READERS)
    attempted = threading.Barrier(READERS)
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def read(index: int) -> None:
        subject = "quiet" if index % 6 == 0 else "noisy"
        start.wait()
        try:
            with heavy_read_slot(tenant_id="t", subject_id=subject):
                result = "served"
                attempted.wait()  # every reader tries while the served ones hold their slot
        except HeavyReadShed as shed:
            result = f"shed by {shed.scope}"
            attempted.wait()
        with lock:
            outcomes.append((subject, result))

    threads = [threading.Thread(target=read, args=(index,)) for index in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count(("quiet", "served")) == 4
    assert outcomes.count(("noisy", "served")) == 6
    assert outcomes.count(("noisy", "shed by subject")) == 14


@pytest.mark.django_db
def test_a_noisy_agents_recalls_degrade_and_the_quiet_agents_do_not(tenant, settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 3
    settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = 2
    for subject in ("noisy", "quiet"):
        memory_row(tenant, subject, "editor dark mode")

    held = {"tenant_id": tenant.pk, "subject_id": "noisy"}
    with heavy_read_slot(**held), heavy_read_slot(**held):
        noisy = memory_recall(tenant=tenant, subject_id="noisy", query="editor", limit=5)
        quiet = memory_recall(tenant=tenant, subject_id="quiet", query="editor", limit=5)

    assert (noisy.meta["fallback"], noisy.meta["reason"]) == (True, "heavy_read_shed")
    assert (quiet.meta["fallback"], quiet.meta["reason"]) == (False, None)
    assert [hit.memory.text for hit in quiet.results] == ["editor dark mode"]
