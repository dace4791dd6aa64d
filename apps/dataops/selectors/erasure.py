"""Reads of erasure receipts (they hold no content)."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.dataops.models import ErasureReceipt


def erasure_receipt_list(*, limit: int = 100) -> QuerySet[ErasureReceipt]:
    return ErasureReceipt.objects.order_by("-created_at", "id")[:limit]
