from __future__ import annotations

import factory

from apps.tenancy.models import Tenant


class TenantFactory(factory.django.DjangoModelFactory[Tenant]):
    class Meta:
        model = Tenant

    slug = factory.Sequence(lambda n: f"tenant-{n}")
    name = factory.Faker("company")
