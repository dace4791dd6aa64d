"""What each admitted role gets from each knowledge endpoint, across tenants and under a halt.

Refusals by role or credential, for every endpoint, are in the URLconf-driven matrix
(tests/core/test_auth_matrix_all_endpoints.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import tenant_halt
from tests.knowledge.helpers import BASE, article_url, publish, table_rows

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "list",
    "create",
    "retrieve",
    "update",
    "archive",
    "publish",
    "search",
    "context",
    "metrics",
]
SUCCESS = {
    "list": 200,
    "create": 201,
    "retrieve": 200,
    "update": 200,
    "archive": 204,
    "publish": 200,
    "search": 200,
    "context": 200,
    "metrics": 200,
}
CURATOR_ONLY = {"publish", "metrics"}
AGENT_WRITES = {"create", "update", "archive"}
ROLES = ["agent", "user", "orchestrator", "superadmin"]


def send(client: APIClient, endpoint: str, article) -> Any:
    """One representative, valid request to ``endpoint`` about ``article``."""
    if endpoint == "list":
        return client.get(f"{BASE}/articles")
    if endpoint == "create":
        return client.post(
            f"{BASE}/articles",
            {"title": "Brand new", "body": "Unrelated words entirely.", "category": "finding"},
            format="json",
        )
    if endpoint == "retrieve":
        return client.get(article_url(article.pk))
    if endpoint == "update":
        return client.patch(article_url(article.pk), {"version": 1, "tags": ["x"]}, format="json")
    if endpoint == "archive":
        return client.delete(article_url(article.pk))
    if endpoint == "publish":
        return client.post(f"{article_url(article.pk)}/publish")
    if endpoint == "search":
        return client.post(f"{BASE}/search", {"query": "deploy"}, format="json")
    if endpoint == "context":
        return client.get(f"{BASE}/context", {"query": "deploy"})
    return client.get(f"{BASE}/metrics")


@pytest.fixture
def article(tenant):
    # Owned by the `agent` fixture's agent id, so an agent may edit and archive it.
    return publish(tenant, "Deploy notes", "How we deploy.", owner_agent_id="agent-a")


ROLE_CASES = [
    (f"{role}-{endpoint}", role, endpoint, SUCCESS[endpoint])
    for role in ROLES
    for endpoint in ENDPOINTS
    if not (role == "agent" and endpoint in CURATOR_ONLY)
]


@pytest.mark.parametrize(("_case", "role", "endpoint", "expected"), ROLE_CASES)
def test_each_admitted_role_succeeds_per_endpoint(
    request, article, _case, role, endpoint, expected
):
    # given
    caller = request.getfixturevalue(role)

    # when
    response = send(caller.client, endpoint, article)

    # then
    assert response.status_code == expected


@pytest.mark.parametrize("endpoint", ["retrieve", "update", "archive", "publish"])
@pytest.mark.parametrize("role", [ApiKeyRole.AGENT, ApiKeyRole.USER])
def test_another_tenants_article_is_not_found_and_unchanged(
    make_caller, other_tenant, article, endpoint, role
):
    # given
    foreign = make_caller(
        other_tenant, role, agent_id="agent-a" if role == ApiKeyRole.AGENT else ""
    )
    before = table_rows()

    # when
    response = send(foreign.client, endpoint, article)

    # then
    expected = 403 if (role == ApiKeyRole.AGENT and endpoint == "publish") else 404
    assert response.status_code == expected
    assert table_rows() == before


def test_another_tenant_lists_and_searches_none_of_our_articles(foreign_agent, article):
    # when
    listed = send(foreign_agent.client, "list", article)
    searched = send(foreign_agent.client, "search", article)

    # then
    assert listed.json()["data"] == []
    assert searched.json()["data"] == []


@pytest.mark.parametrize("endpoint", sorted(AGENT_WRITES))
def test_a_custody_halt_freezes_agent_writes(tenant, agent, article, endpoint):
    # given
    tenant_halt(tenant=tenant, reason="incident")
    before = table_rows()

    # when
    response = send(agent.client, endpoint, article)

    # then
    assert response.status_code == 423
    assert response.json()["error"]["code"] == "tenant_halted"
    assert table_rows() == before


@pytest.mark.parametrize("endpoint", ["search", "list", "retrieve", "context"])
def test_a_custody_halt_leaves_agent_reads_alone(tenant, agent, article, endpoint):
    # given
    tenant_halt(tenant=tenant, reason="incident")

    # when
    response = send(agent.client, endpoint, article)

    # then
    assert response.status_code == 200
