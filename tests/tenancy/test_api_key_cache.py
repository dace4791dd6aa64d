"""Hot keys authenticate from memory, and a revocation still lands within the stated bound."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.tenancy import selectors
from apps.tenancy.models import ApiKey, ApiKeyRole
from apps.tenancy.selectors import api_key_authenticate
from apps.tenancy.services import api_key_create, api_key_revoke, tenant_halt

pytestmark = pytest.mark.django_db

WHOAMI = "/api/v1/tenancy/whoami"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    frozen = Clock()
    monkeypatch.setattr(selectors, "_clock", frozen)
    return frozen


@pytest.fixture
def issued(tenant):
    return api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="hot-agent")


def test_a_hot_key_authenticates_without_a_query(issued, django_assert_num_queries):
    with django_assert_num_queries(1):
        first = api_key_authenticate(raw_key=issued.raw_key)
    with django_assert_num_queries(0):
        again = api_key_authenticate(raw_key=issued.raw_key)
    assert first is not None
    assert again is not None
    assert again.pk == first.pk == issued.api_key.pk


def test_a_wrong_secret_for_a_cached_prefix_is_refused(issued):
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    prefix = issued.raw_key.split("_")[1]
    assert api_key_authenticate(raw_key=f"eng_{prefix}_{'x' * 43}") is None


def test_a_revocation_made_elsewhere_lands_within_the_cache_ttl(issued, clock, settings):
    settings.API_KEY_CACHE_SECONDS = 5
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    # Another process revokes: this process's cache is not told.
    ApiKey.objects.filter(pk=issued.api_key.pk).update(revoked_at=timezone.now())

    clock.now += 4.9
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    clock.now += 0.2
    assert api_key_authenticate(raw_key=issued.raw_key) is None


def test_a_revocation_made_in_this_process_lands_at_once(issued, agent_client_for):
    client = agent_client_for(issued)
    assert client.get(WHOAMI).status_code == 200
    api_key_revoke(api_key=issued.api_key)
    response = client.get(WHOAMI)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_halt_made_in_this_process_lands_at_once(issued, agent_client_for, tenant):
    client = agent_client_for(issued)
    assert (
        client.post("/api/v1/memory", {"text": "before the halt"}, format="json").status_code == 201
    )
    tenant_halt(tenant=tenant, reason="custody")
    response = client.post("/api/v1/memory", {"text": "after the halt"}, format="json")
    assert response.status_code == 423


def test_zero_seconds_disables_the_cache(issued, settings, django_assert_num_queries):
    settings.API_KEY_CACHE_SECONDS = 0
    api_key_authenticate(raw_key=issued.raw_key)
    with django_assert_num_queries(1):
        assert api_key_authenticate(raw_key=issued.raw_key) is not None


@pytest.fixture
def agent_client_for():
    from rest_framework.test import APIClient

    def _client(issued_key):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued_key.raw_key}")
        return client

    return _client
