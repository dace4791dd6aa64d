from __future__ import annotations

import uuid
from typing import Self, TypeVar

from django.db import models
from django.db.models import Q
from typing_extensions import override

from apps.core.models import BaseModel


class Tenant(BaseModel):
    """An isolated customer of Engram. Every domain row belongs to exactly one tenant."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Custody halt: while set, agent-role writes are refused (423); reads and superadmin
    # oversight continue.
    halted_at = models.DateTimeField(null=True, blank=True)
    halt_reason = models.CharField(max_length=500, blank=True, default="")

    # Per-tenant providers ("bring your own key"). Blank provider = the deployment default.
    # Secrets are Fernet-encrypted (apps.tenancy.encryption) and never leave the process.
    embedding_provider = models.CharField(max_length=32, blank=True, default="")
    embedding_config = models.JSONField(default=dict, blank=True)
    embedding_api_key_encrypted = models.TextField(blank=True, default="")
    llm_provider = models.CharField(max_length=32, blank=True, default="")
    llm_config = models.JSONField(default=dict, blank=True)
    llm_api_key_encrypted = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["slug"]

    @override
    def __str__(self) -> str:
        return self.slug

    @property
    def is_halted(self) -> bool:
        return self.halted_at is not None


_Scoped = TypeVar("_Scoped", bound="TenantScopedModel")


class TenantScopedQuerySet(models.QuerySet[_Scoped]):
    def for_tenant(self, tenant: Tenant) -> Self:
        return self.filter(tenant=tenant)


TenantScopedManager = models.Manager.from_queryset(TenantScopedQuerySet)


class TenantScopedModel(BaseModel):
    """Base for every tenant-owned row: a non-null indexed tenant FK (STYLE rule 4)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=True)

    objects = TenantScopedManager()

    class Meta:
        abstract = True


class ApiKeyRole(models.TextChoices):
    AGENT = "agent", "Agent"
    USER = "user", "User"
    ORCHESTRATOR = "orchestrator", "Orchestrator"
    SUPERADMIN = "superadmin", "Superadmin"


class ApiKey(BaseModel):
    """A bearer credential. The secret is shown once; only its SHA-256 is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, null=True, blank=True, related_name="api_keys"
    )
    name = models.CharField(max_length=200, blank=True, default="")
    role = models.CharField(max_length=16, choices=ApiKeyRole.choices)
    agent_id = models.CharField(max_length=200, blank=True, default="")
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            # Only a superadmin key is tenant-less, and a superadmin key never has a tenant.
            models.CheckConstraint(
                condition=(Q(role=ApiKeyRole.SUPERADMIN) & Q(tenant__isnull=True))
                | (~Q(role=ApiKeyRole.SUPERADMIN) & Q(tenant__isnull=False)),
                name="api_key_tenant_matches_role",
            ),
            models.CheckConstraint(
                condition=Q(role__in=ApiKeyRole.values), name="api_key_role_valid"
            ),
        ]

    @override
    def __str__(self) -> str:
        return f"{self.prefix} ({self.role})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


#: The longest ``Idempotency-Key`` accepted (the IETF draft sets no bound; Stripe uses 255).
IDEMPOTENCY_KEY_MAX_LENGTH = 255


class IdempotencyRecord(TenantScopedModel):
    """The first response to a write that carried an ``Idempotency-Key`` (DESIGN §10).

    One row per (tenant, subject, key). ``status_code`` is null while the first request is in
    flight; ``claim_token`` changes whenever a request takes the key over, so a late finisher
    of an abandoned claim cannot overwrite the new owner's response.
    """

    id = models.BigAutoField(primary_key=True)
    subject_id = models.CharField(max_length=200)
    key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_LENGTH)
    fingerprint = models.CharField(max_length=64)
    claim_token = models.UUIDField(default=uuid.uuid4)
    claimed_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject_id", "key"], name="idempotency_key_unique_per_subject"
            ),
        ]
