"""Every endpoint under /api/v1, discovered from the URLconf, is charged to a rate-limit bucket
that it really enforces, or is a GET exempt for a stated reason that really neither embeds,
ranks nor writes.

The list is built from `config.urls`, and each method's bucket or exemption is read from the
view's own declaration (``TenantApi.rate_limits``, ``rate_limit_exempt``), then proved by
requests: a charged method is refused with its bucket's limit set to zero, and an exempt GET is
served with every limit at zero while an embedding or a heavy-read slot would show. Every
method is also refused, and changes nothing, past its subject's in-flight cap.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.core.cache import cache

from apps.core.rate_limits import RateBucket
from apps.providers import embeddings
from apps.tenancy.api_base import (
    EMBEDDING_WRITE,
    MEMORY_WRITE,
    RECALL,
    WRITE,
    WRITE_METHODS,
    TenantApi,
)
from apps.tenancy.models import ApiKeyRole
from tests.core.urlconf import walk
from tests.knowledge.factories import ArticleFactory
from tests.memory.factories import MemoryFactory, SessionTurnFactory
from tests.projects.factories import ProjectFactory

BUCKETS = (RECALL, MEMORY_WRITE, EMBEDDING_WRITE, WRITE)
HANDLERS = ("get", "post", "put", "patch", "delete")
API_PREFIX = "api/v1/"
#: A recall id names no row; any well-formed one will do.
RECALL_ID = "00000000-0000-4000-8000-000000000009"
#: Query strings a GET needs to do its whole work, its search parameter included, so a GET
#: that searched while declared exempt would show it; every other GET is called bare.
GET_QUERY = {
    "/api/v1/knowledge/articles": lambda objects: {"q": "tea"},
    "/api/v1/knowledge/context": lambda objects: {"query": "tea"},
    "/api/v1/projects/resolve": lambda objects: {"slug": objects["project"].slug},
}


def _methods(view: type[TenantApi]) -> list[str]:
    methods = [name.upper() for name in HANDLERS if hasattr(view, name)]
    return [*methods, "HEAD"] if "GET" in methods else methods


def _api_views() -> list[tuple[str, Any]]:
    return [
        (route, getattr(callback, "view_class", None))
        for route, callback in walk()
        if route.startswith(API_PREFIX)
    ]


ROUTES: list[tuple[str, type[TenantApi]]] = [
    (route, view)
    for route, view in _api_views()
    if isinstance(view, type) and issubclass(view, TenantApi)
]
ENDPOINTS = sorted(
    ((method, route, view) for route, view in ROUTES for method in _methods(view)),
    key=lambda endpoint: endpoint[:2],
)
CHARGED = [
    (method, route, view.rate_bucket_for(method))
    for method, route, view in ENDPOINTS
    if view.rate_bucket_for(method) is not None
]
EXEMPT_GETS = [
    (route, view)
    for method, route, view in ENDPOINTS
    if method == "GET"
    and route
    not in {
        charged_route for charged_method, charged_route, _ in CHARGED if charged_method == "GET"
    }
]


def _row_counts():
    return {
        model._meta.label: model._base_manager.count()
        for model in django_apps.get_models()
        if model.__module__.startswith("apps.")
    }


@pytest.fixture
def objects(tenant):
    """One row of each kind a path names, visible to the ``agent`` caller."""
    return {
        "memory": MemoryFactory.create(tenant=tenant),
        "article": ArticleFactory.create(tenant=tenant, title="Tea"),
        "project": ProjectFactory.create(tenant=tenant),
        "turn": SessionTurnFactory.create(tenant=tenant, session_id="session-1"),
    }


def _path(route: str, objects) -> str:
    values = {
        "memory_id": objects["memory"].pk,
        "article_id": objects["article"].pk,
        "project_id": objects["project"].pk,
        "session_id": objects["turn"].session_id,
        "seq": objects["turn"].seq,
        "recall_id": RECALL_ID,
    }
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(values[match.group(1)]), route)


def _caller(request, view: type[TenantApi], method: str):
    """An agent where the method admits one, else a user key (curator-only views)."""
    roles = view.roles_for("GET" if method == "HEAD" else method)
    role = ApiKeyRole.AGENT if ApiKeyRole.AGENT in roles else ApiKeyRole.USER
    return request.getfixturevalue(str(role))


def _send(caller, method: str, path: str, query=None):
    if method in ("GET", "HEAD"):
        return getattr(caller.client, method.lower())(path, query or {})
    return getattr(caller.client, method.lower())(path, {}, format="json")


def _limits(settings, *, zero: tuple, others: int) -> None:
    for bucket in BUCKETS:
        setattr(settings, bucket.limit_setting, 0 if bucket in zero else others)
        # Windows are fixed; a day-long one keeps a window boundary out of every test.
        setattr(settings, bucket.window_setting, 86_400)


def test_the_discovery_finds_every_api_and_the_buckets_they_declare():
    charged = {(method, route): bucket for method, route, bucket in CHARGED}

    assert len(ENDPOINTS) >= 40
    assert {bucket for _, _, bucket in CHARGED} == set(BUCKETS)
    # The reads that embed or rank, and the writes that embed a whole article.
    assert charged[("GET", "api/v1/knowledge/context")] == RECALL
    assert charged[("HEAD", "api/v1/knowledge/context")] == RECALL
    assert charged[("POST", "api/v1/knowledge/context")] == RECALL
    assert charged[("POST", "api/v1/knowledge/search")] == RECALL
    assert charged[("POST", "api/v1/memory/recall")] == RECALL
    assert charged[("POST", "api/v1/recall")] == RECALL
    assert charged[("POST", "api/v1/knowledge/articles")] == EMBEDDING_WRITE
    assert charged[("PATCH", "api/v1/knowledge/articles/<uuid:article_id>")] == EMBEDDING_WRITE
    assert charged[("POST", "api/v1/memory/graduate")] == EMBEDDING_WRITE
    assert charged[("POST", "api/v1/memory")] == MEMORY_WRITE
    assert charged[("POST", "api/v1/memory/batch")] == MEMORY_WRITE
    assert charged[("DELETE", "api/v1/memory/<uuid:memory_id>")] == WRITE
    assert charged[("POST", "api/v1/memory/erase")] == WRITE


def test_every_api_view_is_a_tenant_api():
    not_tenant_apis = [
        route
        for route, view in _api_views()
        if not (isinstance(view, type) and issubclass(view, TenantApi))
    ]

    assert not_tenant_apis == []


def test_views_outside_the_api_answer_only_reads():
    outside = [
        (route, name)
        for route, callback in walk()
        if not route.startswith(API_PREFIX)
        for name in HANDLERS
        if name != "get" and hasattr(getattr(callback, "view_class", None), name)
    ]

    assert outside == []


@pytest.mark.parametrize(("method", "route", "view"), ENDPOINTS)
def test_every_method_is_charged_or_exempt_for_a_reason(method, route, view):
    bucket = view.rate_bucket_for(method)
    reason = view.rate_limit_exempt.get("GET" if method == "HEAD" else method, "")

    assert (bucket is None) == bool(reason.strip()), (bucket, reason)
    if method in WRITE_METHODS:
        assert bucket is not None


def _id(value):
    return value.name if isinstance(value, RateBucket) else None


@pytest.mark.parametrize(("method", "route", "bucket"), CHARGED, ids=_id)
def test_a_charged_method_is_refused_at_its_buckets_limit_and_changes_nothing(
    request, settings, objects, method, route, bucket
):
    # Only the declared bucket is at zero: the 429 proves that bucket is the one charged.
    _limits(settings, zero=(bucket,), others=1_000)
    view = dict(ROUTES)[route]
    caller = _caller(request, view, method)
    before = _row_counts()

    response = _send(caller, method, _path(route, objects))

    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 86_401
    if method != "HEAD":  # a HEAD answer has no body
        assert response.json()["error"]["code"] == "rate_limited"
        assert response.json()["error"]["details"] == {
            "bucket": bucket.name,
            "limit": 0,
            "window_seconds": 86_400,
            "retry_after_seconds": int(response["Retry-After"]),
        }
    assert _row_counts() == before


@pytest.mark.parametrize(("route", "view"), EXEMPT_GETS)
def test_an_exempt_get_neither_embeds_ranks_nor_writes(
    request, settings, mocker, tenant, objects, route, view
):
    _limits(settings, zero=BUCKETS, others=0)
    caller = _caller(request, view, "GET")
    query = GET_QUERY.get("/" + route, lambda objects: {})(objects)
    embed = mocker.spy(embeddings, "_embed")
    before = _row_counts()

    response = _send(caller, "GET", _path(route, objects), query)

    # Served in full (not refused, not a 404 or 422 that stopped before the work).
    assert response.status_code == 200, response.json()
    assert embed.call_count == 0
    assert cache.get(f"heavy_read:inflight:{tenant.pk}") is None
    assert _row_counts() == before


@pytest.mark.parametrize(("method", "route", "view"), ENDPOINTS)
def test_every_method_is_refused_past_the_subjects_in_flight_cap_and_changes_nothing(
    request, settings, objects, method, route, view
):
    # A cap of zero: every request is the one past it, whatever its bucket or exemption.
    settings.SUBJECT_MAX_IN_FLIGHT = 0
    _limits(settings, zero=(), others=1_000)
    caller = _caller(request, view, method)
    before = _row_counts()

    response = _send(caller, method, _path(route, objects))

    assert response.status_code == 429
    assert response["Retry-After"] == "1"
    if method != "HEAD":
        assert response.json()["error"]["code"] == "too_many_requests_in_flight"
    assert _row_counts() == before
