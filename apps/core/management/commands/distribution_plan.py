from typing import Any

from django.db import connections
from typing_extensions import override

from apps.core.db.distribution import distribution_plan
from apps.core.db.routers import PRIMARY
from apps.core.management.base import EngramCommand


class Command(EngramCommand):
    help = (
        "Print the Citus calls that spread this database's tables over a cluster sharded by "
        "tenant: reference tables first, then every tenant-owned table distributed by "
        "tenant_id and colocated (docs/deployment.md, 'Sharding by tenant'). Reads the "
        "catalog only; runs nothing."
    )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        plan = distribution_plan(connections[PRIMARY])
        human = "\n".join(
            [
                *plan.statements,
                f"-- left on the coordinator as plain tables: {', '.join(plan.local_tables)}",
            ]
        )
        self.render(options, plan.as_dict(), human)
