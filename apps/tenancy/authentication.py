"""``Authorization: Bearer <key>`` authentication for DRF, throttled per source address."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from typing_extensions import override

from apps.core.rate_limits import (
    rate_limit_count,
    rate_limit_reached,
    rate_window_key,
    request_source,
)
from apps.tenancy.exceptions import AuthenticationRateLimited
from apps.tenancy.key_revocations import CACHE_KEY as KEY_CHANGES_CACHE_KEY
from apps.tenancy.models import ApiKey
from apps.tenancy.selectors import api_key_authenticate
from apps.tenancy.services import api_key_touch


@dataclass(frozen=True)
class KeyPrincipal:
    """``request.user`` for a key-authenticated request. There are no human users."""

    api_key: ApiKey
    is_authenticated: bool = True
    is_anonymous: bool = False

    @property
    def pk(self) -> str:
        return str(self.api_key.pk)


class ApiKeyAuthentication(BaseAuthentication):
    @override
    def authenticate(self, request: Request) -> tuple[KeyPrincipal, ApiKey] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        # A source past its failures is refused before the key is parsed or looked up: the
        # lookup is what a stream of made-up keys would otherwise cost, and while throttled
        # a valid key cannot be told apart without it.
        bucket = f"auth-failures:{request_source(request.META)}"
        window_seconds = settings.AUTH_FAILURE_WINDOW_SECONDS
        now = time.time()
        failures_key = rate_window_key(bucket, window_seconds, now)
        # The two reads every authentication makes, in one round trip to the shared cache.
        seen = cache.get_many([failures_key, KEY_CHANGES_CACHE_KEY])
        retry_after = rate_limit_reached(
            bucket=bucket,
            limit=settings.AUTH_FAILURE_LIMIT,
            window_seconds=window_seconds,
            now=now,
            hits=seen.get(failures_key, 0),
        )
        if retry_after is not None:
            raise AuthenticationRateLimited(wait=retry_after)
        try:
            api_key = self._api_key(header, changes_token=seen.get(KEY_CHANGES_CACHE_KEY))
        except AuthenticationFailed:
            rate_limit_count(bucket=bucket, window_seconds=window_seconds)
            raise
        api_key_touch(api_key=api_key)
        return KeyPrincipal(api_key=api_key), api_key

    @staticmethod
    def _api_key(header: str, *, changes_token: object) -> ApiKey:
        scheme, _, raw_key = header.strip().partition(" ")
        raw_key = raw_key.strip()
        if scheme.lower() != "bearer" or not raw_key or " " in raw_key:
            raise AuthenticationFailed("Malformed Authorization header; use 'Bearer <key>'.")
        api_key = api_key_authenticate(raw_key=raw_key, changes_token=changes_token)
        if api_key is None:
            raise AuthenticationFailed("Invalid or revoked API key.")
        return api_key

    @override
    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
