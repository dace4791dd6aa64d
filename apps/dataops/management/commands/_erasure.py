"""What the two erasure commands share: ``--tenant``, ``--dry-run``, the confirmation and the
receipt."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.dataops.services import Erasure, render_erasure
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class ErasureCommand(EngramCommand):
    """Erase the scope :meth:`erase` names within ``--tenant`` and print the receipt.

    Unless ``--dry-run`` or ``--yes``, the operator is shown the counts a dry run gives and
    confirms them first."""

    destructive = True

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        self.add_scope_arguments(parser)
        parser.add_argument(
            "--dry-run", action="store_true", help="Count only; changes nothing and asks nothing."
        )

    def add_scope_arguments(self, parser: CommandParser) -> None:
        """Arguments that narrow the erasure below the whole tenant."""

    def erase(self, *, tenant: Tenant, options: dict[str, Any], dry_run: bool) -> Erasure:
        raise NotImplementedError

    def scope_label(self, *, tenant: Tenant, options: dict[str, Any]) -> str:
        """What is erased, for the confirmation question."""
        raise NotImplementedError

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        if not options["dry_run"] and not options["yes"]:
            counts = self.erase(tenant=tenant, options=options, dry_run=True).receipt["counts"]
            rows = ", ".join(f"{count} {kind}" for kind, count in counts.items() if count)
            self.confirm(
                options,
                f"Erase {self.scope_label(tenant=tenant, options=options)} for good "
                f"({rows or 'no rows'})? This cannot be undone.",
            )
        erasure = self.erase(tenant=tenant, options=options, dry_run=options["dry_run"])
        self.render(options, erasure.receipt, render_erasure(erasure))
