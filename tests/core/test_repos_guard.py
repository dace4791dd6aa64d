"""The structural (tenant, subject) guard on heavy reads (DESIGN §2)."""

import pytest
from django.db.models import Q

from apps.core.db.routers import HEAVY_READ
from apps.core.repos import ScopeViolation, heavy_read_memories, require_scope
from apps.memory.models import Memory

TENANT = "00000000-0000-0000-0000-000000000001"


def _base():
    return Memory.objects.all()


def test_accepts_conjunctive_tenant_and_subject_equality():
    queryset = _base().filter(tenant_id=TENANT, subject_id="a", superseded_by__isnull=True)

    assert require_scope(queryset, tenant_id=TENANT, subject_id="a") is queryset


def test_accepts_scope_beside_an_ored_residual():
    queryset = (
        _base()
        .filter(tenant_id=TENANT, subject_id="a")
        .filter(Q(project__isnull=True) | Q(project_id=TENANT))
    )

    require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_missing_subject():
    queryset = _base().filter(tenant_id=TENANT)

    with pytest.raises(ScopeViolation, match="subject_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_missing_tenant():
    queryset = _base().filter(subject_id="a")

    with pytest.raises(ScopeViolation, match="tenant_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_ored_subject():
    queryset = _base().filter(tenant_id=TENANT).filter(Q(subject_id="a") | Q(subject_id="b"))

    with pytest.raises(ScopeViolation, match="subject_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_subject_ored_with_anything():
    queryset = _base().filter(Q(tenant_id=TENANT, subject_id="a") | Q(text__icontains="x"))

    with pytest.raises(ScopeViolation):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_negated_subject():
    queryset = _base().filter(tenant_id=TENANT).exclude(subject_id="b")

    with pytest.raises(ScopeViolation, match="subject_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_subject_only_inside_a_subquery():
    inner = Memory.objects.filter(tenant_id=TENANT, subject_id="a").values("pk")
    queryset = _base().filter(tenant_id=TENANT, pk__in=inner)

    with pytest.raises(ScopeViolation, match="subject_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_a_different_subject_than_the_callers():
    queryset = _base().filter(tenant_id=TENANT, subject_id="b")

    with pytest.raises(ScopeViolation, match="does not match"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_an_extra_conflicting_subject_filter():
    queryset = _base().filter(tenant_id=TENANT, subject_id="a").filter(subject_id="b")

    with pytest.raises(ScopeViolation, match="does not match"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_rejects_a_subject_filter_on_a_joined_table():
    # superseded_by__subject_id filters the JOINed row, not the rows being returned.
    queryset = _base().filter(tenant_id=TENANT, superseded_by__subject_id="a")

    with pytest.raises(ScopeViolation, match="subject_id"):
        require_scope(queryset, tenant_id=TENANT, subject_id="a")


def test_heavy_read_memories_routes_to_the_heavy_read_repo():
    queryset = _base().filter(tenant_id=TENANT, subject_id="a")

    assert heavy_read_memories(queryset, tenant_id=TENANT, subject_id="a").db == HEAVY_READ
