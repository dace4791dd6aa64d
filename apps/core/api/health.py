"""Liveness, readiness and metrics endpoints. Unauthenticated by design."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db import connections
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.serializers import ErrorSerializer, HealthOutputSerializer
from apps.core.cache import standing_in
from apps.core.db.routers import HEAVY_READ, PRIMARY
from apps.core.replica import replica_status


def _check_database(alias: str) -> None:
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT 1")


def _check_cache() -> None:
    cache.set("readyz:probe", "ok", timeout=5)
    if cache.get("readyz:probe") != "ok":
        raise RuntimeError("cache did not return the probe value")
    if standing_in():
        # Requests are still served, counting in this process's memory (apps/core/cache.py).
        raise RuntimeError("the shared cache is unreachable")


def _check_broker() -> None:
    from celery import current_app as app

    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, timeout=2)


class HealthzApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(operation_id="healthz", responses={200: HealthOutputSerializer}, tags=["health"])
    def get(self, request: Request) -> Response:
        """The process is up."""
        return Response({"data": {"status": "ok"}, "meta": {}})


class ReadyzApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="readyz",
        responses={200: HealthOutputSerializer, 503: ErrorSerializer},
        tags=["health"],
    )
    def get(self, request: Request) -> Response:
        """Database (both repos), cache and broker all answer.

        With a heavy-read replica configured, its lag and state are reported under
        `data.replica`; a replica that lags or is down does not make the process unready,
        because heavy reads then go to the primary (`meta.degraded_reason` on those reads).
        """
        checks = {
            "database": lambda: _check_database(PRIMARY),
            "heavy_read": lambda: _check_database(HEAVY_READ),
            "cache": _check_cache,
            "broker": _check_broker,
        }
        replica = replica_status(fresh=True)
        if replica.configured:
            del checks["heavy_read"]
        results: dict[str, str] = {}
        for name, check in checks.items():
            try:
                check()
                results[name] = "ok"
            except Exception as exc:
                results[name] = f"error: {type(exc).__name__}"
        ready = all(value == "ok" for value in results.values())
        if replica.configured:
            results["heavy_read"] = (
                "ok" if replica.bypass_reason is None else f"bypassed: {replica.bypass_reason}"
            )
        if not ready:
            return Response(
                {
                    "error": {
                        "code": "not_ready",
                        "message": "A dependency is not answering.",
                        "details": results,
                    }
                },
                status=503,
            )
        data: dict[str, object] = {"status": "ready", "checks": results}
        if replica.configured:
            data["replica"] = replica.as_dict()
        return Response({"data": data, "meta": {}})


class MetricsApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> HttpResponse:
        replica_status(fresh=True)  # the replica gauges are current on every scrape
        return HttpResponse(generate_latest(), content_type=CONTENT_TYPE_LATEST)
