"""``Authorization: Bearer <key>`` authentication for DRF."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from typing_extensions import override

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
        scheme, _, raw_key = header.strip().partition(" ")
        raw_key = raw_key.strip()
        if scheme.lower() != "bearer" or not raw_key or " " in raw_key:
            raise AuthenticationFailed("Malformed Authorization header; use 'Bearer <key>'.")
        api_key = api_key_authenticate(raw_key=raw_key)
        if api_key is None:
            raise AuthenticationFailed("Invalid or revoked API key.")
        api_key_touch(api_key=api_key)
        return KeyPrincipal(api_key=api_key), api_key

    @override
    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
