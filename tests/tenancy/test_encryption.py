"""Provider secrets at rest: the current key encrypts, fallbacks only read, and a rotation moves
what only a fallback reads onto the current key."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command

from apps.tenancy.encryption import decrypt_secret, encrypt_secret, reencrypt_secret
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_llm_config
from apps.tenancy.services import provider_secrets_rotate

#: What `make run` encrypted under before it generated a key: DJANGO_SECRET_KEY's default.
PUBLIC_DEFAULT = "engram-insecure-development-key-change-me"


def test_an_empty_key_is_refused_rather_than_a_public_default(settings):
    settings.ENGRAM_ENCRYPTION_KEY = ""

    with pytest.raises(ImproperlyConfigured):
        encrypt_secret("sk-secret")


def test_a_fallback_key_reads_but_never_writes(settings):
    settings.ENGRAM_ENCRYPTION_KEY = PUBLIC_DEFAULT
    legacy = encrypt_secret("sk-secret")
    settings.ENGRAM_ENCRYPTION_KEY = "generated-local-key"

    without_fallback = decrypt_secret(legacy)
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = [PUBLIC_DEFAULT]
    fresh = encrypt_secret("sk-secret")
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = []

    assert without_fallback == ""
    assert decrypt_secret(fresh) == "sk-secret"


def test_reencrypt_moves_only_what_a_fallback_alone_reads(settings):
    settings.ENGRAM_ENCRYPTION_KEY = PUBLIC_DEFAULT
    legacy = encrypt_secret("sk-secret")
    settings.ENGRAM_ENCRYPTION_KEY = "generated-local-key"
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = [PUBLIC_DEFAULT]
    current = encrypt_secret("sk-current")

    moved = reencrypt_secret(legacy)

    assert moved is not None
    assert (reencrypt_secret(current), reencrypt_secret(""), reencrypt_secret("garbage")) == (
        None,
        None,
        None,
    )
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = []
    assert decrypt_secret(moved) == "sk-secret"


def test_rotation_keeps_a_tenants_old_secret_readable_and_moves_it(tenant, settings):
    # given: an LLM key stored by `make run` under the public default, then a generated key
    settings.ENGRAM_ENCRYPTION_KEY = PUBLIC_DEFAULT
    legacy = encrypt_secret("sk-llm-secret")
    Tenant.objects.filter(pk=tenant.pk).update(
        llm_provider="openai",
        llm_config={"base_url": "http://127.0.0.1:1/v1"},
        llm_api_key_encrypted=legacy,
    )
    settings.ENGRAM_ENCRYPTION_KEY = "generated-local-key"
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = [PUBLIC_DEFAULT]
    tenant.refresh_from_db()
    readable_before = tenant_llm_config(tenant=tenant).api_key

    # when: a start runs the command, then the next start runs it again
    out = StringIO()
    call_command("rotate_provider_secrets", "--json", stdout=out)
    again = provider_secrets_rotate()
    rotated = json.loads(out.getvalue())["rotated"]

    # then: read under the new key alone, and a second start changes nothing
    tenant.refresh_from_db()
    settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS = []
    assert readable_before == "sk-llm-secret"
    assert (rotated, again) == (1, 0)
    assert tenant.llm_api_key_encrypted != legacy
    assert tenant_llm_config(tenant=tenant).api_key == "sk-llm-secret"
    assert tenant.embedding_api_key_encrypted == ""
