from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from factory.declarations import Sequence, SubFactory
from factory.django import DjangoModelFactory
from typing_extensions import override

from apps.projects.models import Project, ProjectStatus
from apps.projects.repo_urls import normalize_repo_url
from tests.tenancy.factories import TenantFactory

# factory_boy's declarations are untyped. Calling them through typed aliases keeps mypy's
# untyped-call check on for everything else in the test suite, without ignore comments.
_sequence = cast(Callable[[Callable[[int], str]], Any], Sequence)
_sub_factory = cast(Callable[[type[Any]], Any], SubFactory)


class ProjectFactory(DjangoModelFactory[Project]):
    """A project row; use ``ProjectFactory.create(...)`` (typed to return a ``Project``).

    ``repo_url`` may be given in any spelling; it is stored normalised, with ``repo_path``
    derived, exactly as the services store it.
    """

    class Meta:
        model = Project

    tenant = _sub_factory(TenantFactory)
    # Sequences rather than Faker: resolve-by-name tests must never meet an accidental twin.
    name = _sequence(lambda n: f"Project {n}")
    slug = _sequence(lambda n: f"project-{n}")
    repo_url = ""
    status = ProjectStatus.ACTIVE

    @classmethod
    @override
    def _adjust_kwargs(cls, **kwargs: Any) -> dict[str, Any]:
        raw = kwargs.get("repo_url") or ""
        if raw:
            ref = normalize_repo_url(raw)
            kwargs["repo_url"] = ref.canonical
            kwargs["repo_path"] = ref.path
        else:
            kwargs["repo_url"] = ""
            kwargs["repo_path"] = ""
        return kwargs
