"""What the two erasure commands share: ``--tenant`` and ``--dry-run``, and the receipt."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.dataops.services import Erasure, render_erasure
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class ErasureCommand(EngramCommand):
    """Erase the scope :meth:`erase` names within ``--tenant`` and print the receipt."""

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        self.add_scope_arguments(parser)
        parser.add_argument("--dry-run", action="store_true", help="Count only.")

    def add_scope_arguments(self, parser: CommandParser) -> None:
        """Arguments that narrow the erasure below the whole tenant."""

    def erase(self, *, tenant: Tenant, options: dict[str, Any]) -> Erasure:
        raise NotImplementedError

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        erasure = self.erase(tenant=tenant, options=options)
        self.render(options, erasure.receipt, render_erasure(erasure))
