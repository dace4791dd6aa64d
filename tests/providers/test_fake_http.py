"""The fake server other apps' tests rely on behaves as documented."""

from __future__ import annotations

import json
import urllib.request
from urllib.error import HTTPError

import pytest

from tests.providers.fake_http import FakeHttpServer, FakeResponse


def _post(server: FakeHttpServer, path: str, body: object) -> tuple[int, object]:
    request = urllib.request.Request(  # noqa: S310 - a fixed http://127.0.0.1 URL
        server.url(path),
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Trace": "t1"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def test_scripted_responses_are_served_in_order_and_the_last_repeats(fake_http: FakeHttpServer):
    fake_http.respond(
        "POST",
        "/x",
        FakeResponse(status=500, json_body={"n": 1}),
        FakeResponse(json_body={"n": 2}),
    )

    assert [_post(fake_http, "/x", {}) for _ in range(3)] == [
        (500, {"n": 1}),
        (200, {"n": 2}),
        (200, {"n": 2}),
    ]


def test_requests_are_recorded_with_headers_and_json_body(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", "/x", {"ok": True})

    _post(fake_http, "/x?debug=1", {"hello": "world"})

    (request,) = fake_http.requests
    assert (request.method, request.path, request.body) == ("POST", "/x", {"hello": "world"})
    assert request.headers["x-trace"] == "t1"
    assert fake_http.requests_to("/x") == [request]


def test_unscripted_routes_answer_404(fake_http: FakeHttpServer):
    status, body = _post(fake_http, "/nowhere", {})

    assert status == 404
    assert body == {"error": {"message": "no fake route /nowhere"}}


def test_respond_needs_a_response(fake_http: FakeHttpServer):
    with pytest.raises(ValueError, match="at least one"):
        fake_http.respond("POST", "/x")
