"""Every authenticated endpoint, discovered from the URLconf, refuses bad credentials and
roles outside its allow-list the same way.

New endpoints are covered automatically: the list is built from `config.urls`, not written by
hand, so an API added later without authentication fails here, and the role cases come from
each view's own allow-list (``TenantApi.roles_for``).
"""

from __future__ import annotations

import re

import pytest
from django.apps import apps as django_apps

from apps.tenancy.api_base import ALL_ROLES, TenantApi
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_revoke
from tests.core.urlconf import walk

PLACEHOLDER = "00000000-0000-4000-8000-000000000009"
METHODS = ("get", "post", "patch", "put", "delete")


def _tenant_endpoints():
    endpoints = []
    for route, callback in walk():
        view = getattr(callback, "view_class", None)
        if view is None or not issubclass(view, TenantApi):
            continue
        path = "/" + re.sub(r"<[^>]+>", PLACEHOLDER, re.sub(r"<int:[^>]+>", "1", route))
        for method in METHODS:
            if hasattr(view, method):
                endpoints.append((method, path, view))
    return sorted(endpoints, key=lambda endpoint: endpoint[:2])


VIEWS = _tenant_endpoints()
ENDPOINTS = [(method, path) for method, path, _view in VIEWS]
#: (method, path, role) for every role the view's allow-list refuses, and every one it admits.
REFUSED = [
    (method, path, role)
    for method, path, view in VIEWS
    for role in sorted(ALL_ROLES - view.roles_for(method.upper()))
]
ADMITTED = [
    (method, path, role)
    for method, path, view in VIEWS
    for role in sorted(view.roles_for(method.upper()))
]


def _row_counts():
    return {
        model._meta.label: model._base_manager.count()
        for model in django_apps.get_models()
        if model.__module__.startswith("apps.")
    }


def test_the_discovery_finds_every_app_api():
    paths = {path for _, path in ENDPOINTS}

    assert len(ENDPOINTS) >= 25
    # Both role sets are exercised: curator-only knowledge views and project writes refuse
    # agents; the rest admit every role.
    assert ("post", "/api/v1/projects/", "agent") in REFUSED
    assert ("get", "/api/v1/projects/", "agent") in ADMITTED
    assert any(path.startswith("/api/v1/knowledge/") for _, path, _ in REFUSED)
    for prefix in ("/api/v1/memory", "/api/v1/knowledge/", "/api/v1/recall", "/api/v1/projects/"):
        assert any(path.startswith(prefix) for path in paths), prefix


def _call(client, method, path, **headers):
    return getattr(client, method)(path, {}, format="json", **headers)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_anonymous_is_401_not_authenticated(anonymous, db, method, path):
    response = _call(anonymous, method, path)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("header", ["Token abc", "Basic dXNlcjpwYXNz", "Bearer", "Bearer abc def"])
@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_malformed_header_is_401(anonymous, db, method, path, header):
    response = _call(anonymous, method, path, HTTP_AUTHORIZATION=header)

    assert response.status_code == 401
    assert response.json()["error"] == {
        "code": "authentication_failed",
        "message": "Malformed Authorization header; use 'Bearer <key>'.",
        "details": {},
    }


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_unknown_key_is_401(anonymous, db, method, path):
    response = _call(
        anonymous, method, path, HTTP_AUTHORIZATION="Bearer eng_000000000000_not-a-real-key"
    )

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


@pytest.mark.parametrize(("method", "path", "role"), REFUSED)
def test_a_role_outside_the_allow_list_is_403_and_writes_nothing(request, method, path, role):
    caller = request.getfixturevalue(role)
    before = _row_counts()

    response = _call(caller.client, method, path)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "path", "role"), ADMITTED)
def test_a_role_in_the_allow_list_gets_past_the_role_check(request, method, path, role):
    caller = request.getfixturevalue(role)

    response = _call(caller.client, method, path)

    assert response.status_code not in (401, 403), response.json()
