"""Tenant-wide data operations: the re-embedding run marker and the erasure receipt.

Both tables were created by the memory app's migrations; these models took them over by state
only (migration 0001), so their tables keep the ``memory_`` names.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q

from apps.core.models import BaseModel
from apps.tenancy.models import TenantScopedModel


class ReembedRun(TenantScopedModel):
    """One ``reembed`` of a tenant with one embedding provider: the resume marker.

    Rows whose vector is older than ``started_at`` (or missing) are still to do; a re-run
    after an interruption finds the unfinished run for the same provider and carries on,
    because everything it already re-embedded has ``embedded_at >= started_at``.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Endpoint and dimensions of the provider (never a secret): a run is only resumed with
    # the provider it started with.
    provider = models.CharField(max_length=500)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    memories_embedded = models.PositiveIntegerField(default=0)
    articles_embedded = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        # The table keeps the name it was created with: the model moved here by state only.
        db_table = "memory_reembedrun"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant"],
                condition=Q(finished_at__isnull=True),
                name="reembed_run_one_open_per_tenant",
            ),
        ]


class ErasureScope(models.TextChoices):
    SUBJECT = "subject", "Subject"
    TENANT = "tenant", "Tenant"


class ErasureReceipt(BaseModel):
    """Proof that a subject's or a tenant's data was erased: what, by whom, how many rows of
    each kind, and whether the verification pass found none left. Never any content.

    Deliberately not tenant-scoped (it outlives the data it is about, and a tenant erasure
    must not delete it) and without a raw subject id: ``scope`` holds the tenant id and the
    sha256 of the subject id, which an operator can recompute from the subject they erased.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scope = models.JSONField()
    requested_by = models.CharField(max_length=200)
    counts = models.JSONField()
    verified = models.BooleanField()

    class Meta:
        db_table = "memory_erasurereceipt"
