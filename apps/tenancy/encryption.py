"""Encryption at rest for tenant provider secrets (Fernet: AES-128-CBC + HMAC-SHA256).

The key comes from ENGRAM_ENCRYPTION_KEY (any string; production requires it) and falls back
to DJANGO_SECRET_KEY in development. Rotating it makes stored secrets unreadable: re-run
``configure_provider`` for each tenant afterwards.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    material = settings.ENGRAM_ENCRYPTION_KEY or settings.SECRET_KEY
    key = base64.urlsafe_b64encode(hashlib.sha256(material.encode("utf-8")).digest())
    return Fernet(key)


def encrypt_secret(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt_secret(ciphertext: str) -> str:
    """Decrypt; an unreadable value (rotated key, tampering) reads as no secret at all."""
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode("ascii")).decode("utf-8")
    except InvalidToken:
        return ""
