"""Shared fixtures: tenants, keys of every role, and authenticated API clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connections
from rest_framework.test import APIClient

from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import IssuedApiKey, api_key_create
from tests.providers.fake_http import fake_http
from tests.tenancy.factories import TenantFactory

__all__ = ["fake_http"]  # a local fake HTTP server, for every test package


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """Start every run from empty tables.

    `--reuse-db` keeps the test database between runs, and a transactional test that was
    interrupted (Ctrl-C, a timeout) never reached its teardown flush; its committed rows
    would otherwise leak into the next run.
    """
    from django.core.management import call_command

    with django_db_blocker.unblock():
        call_command("flush", "--noinput", database="default", verbosity=0)


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    from apps.tenancy.selectors import api_key_cache_clear

    cache.clear()
    api_key_cache_clear()
    yield
    cache.clear()
    api_key_cache_clear()


@pytest.fixture(autouse=True)
def _recall_bumps_finish_within_their_test() -> Iterator[None]:
    """A recall queues its bump for a background thread; let it finish before the test's
    database state goes away, so it never lands in (or fails against) the next test's, and
    close that thread's connection, which would otherwise keep the test database from being
    dropped at the end."""
    yield
    from apps.memory.recall_bump import wait_for_pending_bumps

    wait_for_pending_bumps(close_connection=True)


@pytest.fixture(autouse=True)
def _heavy_read_shares_test_transaction(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a transactional-rollback test, let ``heavy_read`` see the test's uncommitted rows.

    Test settings mirror ``heavy_read`` onto ``default`` (DESIGN §2), but a mirror is a second
    connection and cannot see rows inside the test's open transaction. Pointing the alias at
    the same connection object for the duration of the test fixes that. Tests marked
    ``django_db(transaction=True)`` commit for real and keep the separate connection.
    """
    marker = request.node.get_closest_marker("django_db")
    uses_db = marker is not None or "db" in request.fixturenames
    transactional = "transactional_db" in request.fixturenames or (
        marker is not None
        and (marker.kwargs.get("transaction") or (marker.args and marker.args[0]))
    )
    if not uses_db or transactional:
        yield
        return
    request.getfixturevalue("db")  # the test transaction must exist before the swap
    original = connections["heavy_read"]
    connections["heavy_read"] = connections["default"]
    try:
        yield
    finally:
        connections["heavy_read"] = original


@pytest.fixture
def tenant(db: None) -> Tenant:
    return TenantFactory.create()


@pytest.fixture
def other_tenant(db: None) -> Tenant:
    return TenantFactory.create()


@dataclass
class Caller:
    """An API key plus a client that sends it."""

    issued: IssuedApiKey
    client: APIClient

    @property
    def key(self) -> Any:
        return self.issued.api_key

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.get(path, **kwargs)

    def post(self, path: str, data: Any = None, **kwargs: Any) -> Any:
        return self.client.post(path, data, format="json", **kwargs)

    def patch(self, path: str, data: Any = None, **kwargs: Any) -> Any:
        return self.client.patch(path, data, format="json", **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Any:
        return self.client.delete(path, **kwargs)


@pytest.fixture
def make_caller(db: None) -> Callable[..., Caller]:
    def _make(
        tenant: Tenant | None,
        role: str = ApiKeyRole.AGENT,
        agent_id: str = "",
        impersonate: Tenant | None = None,
    ) -> Caller:
        issued = api_key_create(tenant=tenant, role=role, agent_id=agent_id)
        client = APIClient()
        headers = {"HTTP_AUTHORIZATION": f"Bearer {issued.raw_key}"}
        if impersonate is not None:
            headers["HTTP_X_IMPERSONATE_TENANT"] = impersonate.slug
        client.credentials(**headers)
        return Caller(issued=issued, client=client)

    return _make


@pytest.fixture
def agent(make_caller: Callable[..., Caller], tenant: Tenant) -> Caller:
    return make_caller(tenant, ApiKeyRole.AGENT, agent_id="agent-a")


@pytest.fixture
def other_agent(make_caller: Callable[..., Caller], tenant: Tenant) -> Caller:
    return make_caller(tenant, ApiKeyRole.AGENT, agent_id="agent-b")


@pytest.fixture
def foreign_agent(make_caller: Callable[..., Caller], other_tenant: Tenant) -> Caller:
    return make_caller(other_tenant, ApiKeyRole.AGENT, agent_id="agent-a")


@pytest.fixture
def user(make_caller: Callable[..., Caller], tenant: Tenant) -> Caller:
    return make_caller(tenant, ApiKeyRole.USER)


@pytest.fixture
def orchestrator(make_caller: Callable[..., Caller], tenant: Tenant) -> Caller:
    return make_caller(tenant, ApiKeyRole.ORCHESTRATOR)


@pytest.fixture
def superadmin(make_caller: Callable[..., Caller], tenant: Tenant) -> Caller:
    return make_caller(None, ApiKeyRole.SUPERADMIN, impersonate=tenant)


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()
