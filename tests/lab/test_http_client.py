"""The lab's keep-alive client: statuses as strings, transport errors by name."""

from __future__ import annotations

import socket

import pytest

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create
from lab.http_client import KeepAliveClient


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_posts_json_on_one_connection_with_the_key(live_server, tenant):
    key = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="lab").raw_key
    client = KeepAliveClient(f"{live_server.url}/api/v1", token=key)
    try:
        assert client.post("/memory", {"text": "the lab client wrote this"}) == "201"
        assert client.post("/memory/recall", {"query": "lab client"}) == "200"
        assert client.post("/memory/recall", {"query": ""}) == "422"
        # A per-request key replaces the client's own.
        assert client.post("/memory/recall", {"query": "lab"}, token="not-a-key") == "401"
    finally:
        client.close()


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_post_json_returns_the_body_and_raises_on_a_refusal(live_server, tenant):
    key = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id="lab").raw_key
    client = KeepAliveClient(f"{live_server.url}/api/v1", token=key)
    try:
        written = client.post_json("/memory", {"text": "the kettle is filed under zqlab"})
        recalled = client.post_json("/memory/recall", {"query": "zqlab", "mode": "keyword"})

        assert [hit["memory"]["id"] for hit in recalled["data"]] == [written["data"]["id"]]
        with pytest.raises(RuntimeError, match="answered 422"):
            client.post_json("/memory/recall", {"query": ""})
    finally:
        client.close()


def test_a_transport_error_comes_back_by_name_instead_of_raising():
    client = KeepAliveClient(f"http://127.0.0.1:{_closed_port()}")

    assert client.post("/anything", {}) == "ConnectionRefusedError"
    assert client.post("/anything", {}) == "ConnectionRefusedError"
    client.close()
