"""Every authenticated endpoint, discovered from the URLconf, refuses bad credentials the same way.

New endpoints are covered automatically: the list is built from `config.urls`, not written by
hand, so an API added later without authentication fails here.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from apps.tenancy.api_base import TenantApi
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_revoke

PLACEHOLDER = "00000000-0000-4000-8000-000000000009"
METHODS = ("get", "post", "patch", "put", "delete")


def _walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def _tenant_endpoints():
    endpoints = []
    for route, callback in _walk(get_resolver().url_patterns):
        view = getattr(callback, "view_class", None)
        if view is None or not issubclass(view, TenantApi):
            continue
        path = "/" + re.sub(r"<[^>]+>", PLACEHOLDER, re.sub(r"<int:[^>]+>", "1", route))
        for method in METHODS:
            if hasattr(view, method):
                endpoints.append((method, path))
    return sorted(endpoints)


ENDPOINTS = _tenant_endpoints()


def test_the_discovery_finds_every_app_api():
    paths = {path for _, path in ENDPOINTS}

    assert len(ENDPOINTS) >= 25
    for prefix in ("/api/v1/memory", "/api/v1/knowledge/", "/api/v1/recall", "/api/v1/projects/"):
        assert any(path.startswith(prefix) for path in paths), prefix


def _call(client, method, path, **headers):
    return getattr(client, method)(path, {}, format="json", **headers)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_anonymous_is_401_not_authenticated(anonymous, db, method, path):
    response = _call(anonymous, method, path)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_malformed_header_is_401(anonymous, db, method, path):
    response = _call(anonymous, method, path, HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_revoked_key_is_401(agent, method, path):
    api_key_revoke(api_key=agent.key)

    response = _call(agent.client, method, path)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_superadmin_without_impersonation_is_422(make_caller, db, method, path):
    caller = make_caller(None, ApiKeyRole.SUPERADMIN)

    response = _call(caller.client, method, path)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "impersonation_tenant_required"
