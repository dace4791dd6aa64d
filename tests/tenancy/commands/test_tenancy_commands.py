import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from apps.tenancy.encryption import decrypt_secret
from apps.tenancy.models import ApiKey, Tenant


def _run(*args, **kwargs):
    out = StringIO()
    call_command(*args, stdout=out, **kwargs)
    return out.getvalue()


def _whoami(raw_key):
    client = APIClient()
    return client.get("/api/v1/tenancy/whoami", HTTP_AUTHORIZATION=f"Bearer {raw_key}")


def test_operator_creates_a_tenant_and_an_agent_key_that_authenticates(db):
    tenant = json.loads(_run("create_tenant", "--slug", "acme", "--name", "Acme", "--json"))
    issued = json.loads(
        _run("create_api_key", "--tenant", "acme", "--role", "agent", "--agent-id", "bot", "--json")
    )

    response = _whoami(issued["key"])

    assert tenant["slug"] == "acme"
    assert response.status_code == 200
    assert response.json()["data"]["subject_id"] == "bot"
    stored = ApiKey.objects.get(pk=issued["id"])
    assert issued["key"] not in (stored.secret_hash, stored.prefix)


def test_plain_output_prints_only_the_secret(db):
    _run("create_tenant", "--slug", "acme")

    raw = _run("create_api_key", "--tenant", "acme", "--role", "user").strip()

    assert _whoami(raw).status_code == 200


def test_duplicate_tenant_slug_fails_cleanly(db):
    _run("create_tenant", "--slug", "acme")

    with pytest.raises(CommandError, match="tenant_exists"):
        _run("create_tenant", "--slug", "acme")

    assert Tenant.objects.count() == 1


@pytest.mark.parametrize(
    ("_case", "args", "message"),
    [
        ("no_tenant_for_agent", ["--role", "agent"], "--tenant is required"),
        ("unknown_tenant", ["--tenant", "nope", "--role", "user"], "not_found"),
        (
            "agent_id_on_user",
            ["--tenant", "acme", "--role", "user", "--agent-id", "x"],
            "invalid_agent_id",
        ),
    ],
)
def test_create_api_key_rejects_bad_input(db, _case, args, message):
    _run("create_tenant", "--slug", "acme")

    with pytest.raises(CommandError, match=message):
        _run("create_api_key", *args)

    assert ApiKey.objects.count() == 0


def test_superadmin_key_has_no_tenant(db):
    issued = json.loads(_run("create_api_key", "--role", "superadmin", "--json"))

    assert issued["tenant"] is None
    assert ApiKey.objects.get(pk=issued["id"]).tenant_id is None


def test_list_and_revoke(db):
    _run("create_tenant", "--slug", "acme")
    issued = json.loads(_run("create_api_key", "--tenant", "acme", "--role", "user", "--json"))

    revoked = json.loads(_run("revoke_api_key", issued["prefix"], "--json", "--yes"))
    active = json.loads(_run("list_api_keys", "--tenant", "acme", "--json"))
    everything = json.loads(
        _run("list_api_keys", "--tenant", "acme", "--include-revoked", "--json")
    )

    assert revoked["revoked_at"] is not None
    assert active == []
    assert [key["prefix"] for key in everything] == [issued["prefix"]]
    assert "key" not in everything[0]
    assert _whoami(issued["key"]).status_code == 401


def test_revoking_an_unknown_key_fails(db):
    with pytest.raises(CommandError, match="No API key"):
        _run("revoke_api_key", "nope")


def test_halt_and_resume(db):
    _run("create_tenant", "--slug", "acme")

    halted = json.loads(_run("halt_tenant", "acme", "--reason", "incident 7", "--json"))
    assert Tenant.objects.get(slug="acme").is_halted
    resumed = json.loads(_run("resume_tenant", "acme", "--json"))

    assert halted["reason"] == "incident 7"
    assert resumed["halted_at"] is None
    assert not Tenant.objects.get(slug="acme").is_halted


def test_configure_embedding_provider_stores_the_key_encrypted(db, fake_http, monkeypatch):
    _run("create_tenant", "--slug", "acme")
    fake_http.respond_json(
        "POST",
        "/v1/embeddings",
        {"data": [{"index": 0, "embedding": [0.1] * 384}], "model": "m", "object": "list"},
    )
    monkeypatch.setenv("ACME_EMBED_KEY", "sk-secret-value")

    out = _run(
        "configure_provider",
        "--tenant",
        "acme",
        "--kind",
        "embedding",
        "--provider",
        "openai",
        "--base-url",
        fake_http.url("/v1"),
        "--model",
        "m",
        "--api-key-env",
        "ACME_EMBED_KEY",
        "--json",
    )

    tenant = Tenant.objects.get(slug="acme")
    assert json.loads(out)["api_key_set"] is True
    assert "sk-secret-value" not in out
    assert tenant.embedding_provider == "openai"
    assert "sk-secret-value" not in tenant.embedding_api_key_encrypted
    assert decrypt_secret(tenant.embedding_api_key_encrypted) == "sk-secret-value"


def test_configure_embedding_provider_refuses_a_wrong_dimension(db, fake_http):
    _run("create_tenant", "--slug", "acme")
    fake_http.respond_json(
        "POST",
        "/v1/embeddings",
        {"data": [{"index": 0, "embedding": [0.1] * 1536}], "model": "m", "object": "list"},
    )

    with pytest.raises(CommandError, match="invalid_provider_config"):
        _run(
            "configure_provider",
            "--tenant",
            "acme",
            "--kind",
            "embedding",
            "--provider",
            "openai",
            "--base-url",
            fake_http.url("/v1"),
            "--model",
            "m",
        )

    assert Tenant.objects.get(slug="acme").embedding_provider == ""


def test_configure_llm_provider_validates_the_name(db):
    _run("create_tenant", "--slug", "acme")

    with pytest.raises(CommandError, match="invalid_provider_config"):
        _run("configure_provider", "--tenant", "acme", "--kind", "llm", "--provider", "gpt-x")

    _run("configure_provider", "--tenant", "acme", "--kind", "llm", "--provider", "heuristic")
    assert Tenant.objects.get(slug="acme").llm_provider == "heuristic"


@pytest.mark.parametrize(
    ("_case", "kind", "extra"),
    [
        ("bad_dimensions", "embedding", ["--provider", "fake", "--dimensions", "-3"]),
        ("unknown_embedding_provider", "embedding", ["--provider", "nope"]),
    ],
)
def test_configure_provider_rejects_bad_config_cleanly(db, _case, kind, extra):
    _run("create_tenant", "--slug", "acme")

    with pytest.raises(CommandError, match="invalid_provider_config"):
        _run("configure_provider", "--tenant", "acme", "--kind", kind, *extra)

    assert Tenant.objects.get(slug="acme").embedding_provider == ""
