"""Encryption at rest for tenant provider secrets (Fernet: AES-128-CBC + HMAC-SHA256).

The key is derived from ``ENGRAM_ENCRYPTION_KEY`` (any string). Production requires it; local
settings generate a random one on first start under ``$ENGRAM_DATA_DIR`` when it is unset;
test settings pin one. An empty key is refused rather than replaced by a public default.

``ENGRAM_ENCRYPTION_KEY_FALLBACKS`` are older keys still accepted for reading (a rotation, or
local data written before the generated key existed); :func:`reencrypt_secret` moves a value
onto the current key.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _fernet_for(material: str) -> Fernet:
    key = base64.urlsafe_b64encode(hashlib.sha256(material.encode("utf-8")).digest())
    return Fernet(key)


def _current() -> Fernet:
    material = settings.ENGRAM_ENCRYPTION_KEY
    if not material:
        raise ImproperlyConfigured(
            "ENGRAM_ENCRYPTION_KEY is empty: provider secrets are never encrypted with a "
            "public default."
        )
    return _fernet_for(material)


def _readers() -> MultiFernet:
    """The current key first, then each fallback: what may decrypt a stored value."""
    fallbacks = [_fernet_for(m) for m in settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS if m]
    return MultiFernet([_current(), *fallbacks])


def encrypt_secret(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _current().encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt_secret(ciphertext: str) -> str:
    """Decrypt; an unreadable value (rotated key, tampering) reads as no secret at all."""
    if not ciphertext:
        return ""
    try:
        return _readers().decrypt(ciphertext.encode("ascii")).decode("utf-8")
    except InvalidToken:
        return ""


def reencrypt_secret(ciphertext: str) -> str | None:
    """``ciphertext`` re-encrypted under the current key when only a fallback key reads it;
    ``None`` when it needs nothing (empty, already current, or unreadable by every key)."""
    if not ciphertext:
        return None
    token = ciphertext.encode("ascii")
    try:
        _current().decrypt(token)
    except InvalidToken:
        pass
    else:
        return None
    try:
        return _readers().rotate(token).decode("ascii")
    except InvalidToken:
        return None
