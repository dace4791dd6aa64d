from __future__ import annotations

from factory.declarations import Sequence
from factory.django import DjangoModelFactory
from factory.faker import Faker

from apps.tenancy.models import Tenant


class TenantFactory(DjangoModelFactory[Tenant]):
    class Meta:
        model = Tenant

    slug = Sequence(lambda n: f"tenant-{n}")
    name = Faker("company")
