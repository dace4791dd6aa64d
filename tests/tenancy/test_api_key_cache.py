"""Hot keys authenticate from memory, and a revocation still lands within the stated bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from apps.tenancy import key_revocations, selectors
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


def _revoke_elsewhere(api_key):
    """What another process's revocation leaves this one: the row changed, no cache told."""
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())


def test_a_revocation_announced_in_the_shared_cache_lands_at_once(issued, clock):
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    _revoke_elsewhere(issued.api_key)

    # Another host announced it in the shared cache (Redis in production).
    cache.set(key_revocations.CACHE_KEY, "announced-by-another-host", timeout=None)

    assert api_key_authenticate(raw_key=issued.raw_key) is None


def test_a_revocation_announced_on_this_machine_lands_at_once(issued, clock, settings, tmp_path):
    settings.API_KEY_CHANGES_FILE = tmp_path / "api-key-changes"
    assert api_key_authenticate(raw_key=issued.raw_key) is not None
    _revoke_elsewhere(issued.api_key)

    # Another process of this machine (an operator's command) shares only the data dir.
    token = cache.get(key_revocations.CACHE_KEY)
    key_revocations._announce()
    cache.set(key_revocations.CACHE_KEY, token, timeout=None)

    assert api_key_authenticate(raw_key=issued.raw_key) is None


def test_nothing_announced_keeps_the_key_cached(issued, django_assert_num_queries):
    api_key_authenticate(raw_key=issued.raw_key)

    with django_assert_num_queries(0):
        assert api_key_authenticate(raw_key=issued.raw_key) is not None


@pytest.mark.django_db(transaction=True)
def test_an_operator_revocation_is_refused_on_the_next_request(tenant, agent_client_for):
    # The incident: revoke_api_key in a shell, and the key still answered 200 seconds later.
    issued = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="leaked")
    client = agent_client_for(issued)
    assert client.get(WHOAMI).status_code == 200
    assert client.get(WHOAMI).status_code == 200  # now from this process's key cache

    revoked = subprocess.run(  # noqa: S603 - this interpreter, arguments built here
        [sys.executable, "manage.py", "revoke_api_key", issued.api_key.prefix, "--yes"],
        capture_output=True,
        text=True,
        cwd=django_settings.BASE_DIR,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "ENGRAM_DATA_DIR": str(Path(django_settings.EMBEDDED_POSTGRES_DIR).parent),
            "ENGRAM_EMBEDDED_DATABASE": connection.settings_dict["NAME"],
        },
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert revoked.returncode == 0, revoked.stderr

    response = client.get(WHOAMI)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
