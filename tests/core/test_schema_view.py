"""The schema endpoint under concurrent requests, and errors it renders as YAML."""

import threading
import time

import yaml
from django.test import Client
from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response

from apps.core.api.exception_handlers import error_body
from apps.core.exceptions import CoreErrorCode


def test_schema_generation_runs_one_request_at_a_time(monkeypatch):
    inside = 0
    most_inside = 0
    guard = threading.Lock()

    def generate(self, request):
        nonlocal inside, most_inside
        with guard:
            inside += 1
            most_inside = max(most_inside, inside)
        time.sleep(0.05)
        with guard:
            inside -= 1
        return Response({"openapi": "3.0.3"})

    monkeypatch.setattr(SpectacularAPIView, "_get_schema_response", generate)
    statuses: list[int] = []

    def fetch():
        statuses.append(Client().get("/api/schema/?format=json").status_code)

    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses == [200, 200, 200, 200]
    assert most_inside == 1


def test_an_error_body_holds_plain_strings_every_renderer_can_write():
    body = error_body(CoreErrorCode.INTERNAL_ERROR, "boom")

    assert type(body["error"]["code"]) is str
    assert yaml.safe_load(yaml.dump(body)) == {
        "error": {"code": "internal_error", "message": "boom", "details": {}}
    }
