"""The two repos and the structural scope guard (DESIGN §2).

Recall runs on the ``heavy_read`` alias, and isolation there is nothing but the explicit
``(tenant_id, subject_id)`` predicate. :func:`require_scope` inspects a queryset's WHERE tree
and refuses to run it unless the *outermost* query carries conjunctive equality filters on
both columns with the expected values. A filter that is OR'd, negated, or only present inside
a subquery does not count: none of those bound the rows the outer query returns.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from django.db.models.expressions import Col
from django.db.models.lookups import Exact
from django.db.models.sql.where import AND, WhereNode

from apps.core.db.routers import HEAVY_READ

M = TypeVar("M", bound=Model)


class ScopeViolation(RuntimeError):
    """A query that could return rows outside one (tenant, subject) scope."""


def _conjunctive_equalities(node: WhereNode, base_alias: str) -> dict[str, list[Any]]:
    """Column → values of ``col = value`` lookups reachable from the root through ANDs only."""
    found: dict[str, list[Any]] = {}
    if node.negated or (node.connector != AND and len(node.children) > 1):
        return found
    for child in node.children:
        if isinstance(child, WhereNode):
            for column, values in _conjunctive_equalities(child, base_alias).items():
                found.setdefault(column, []).extend(values)
        elif isinstance(child, Exact) and isinstance(child.lhs, Col):
            if child.lhs.alias != base_alias or hasattr(child.rhs, "resolve_expression"):
                continue
            target_column = child.lhs.target.column
            if target_column is not None:
                found.setdefault(target_column, []).append(child.rhs)
    return found


def require_scope(queryset: QuerySet[M], *, tenant_id: Any, subject_id: str) -> QuerySet[M]:
    """Return ``queryset`` unchanged if its outer WHERE pins both scope columns, else raise."""
    query = queryset.query
    base_alias = query.get_initial_alias()
    equalities = _conjunctive_equalities(query.where, base_alias)
    expected = {"tenant_id": tenant_id, "subject_id": subject_id}
    for column, value in expected.items():
        values = equalities.get(column, [])
        if not values:
            raise ScopeViolation(f"query lacks an outer conjunctive {column} = … filter")
        if any(str(found) != str(value) for found in values):
            raise ScopeViolation(f"query's {column} filter does not match the caller's scope")
    return queryset


def heavy_read_memories(queryset: QuerySet[M], *, tenant_id: Any, subject_id: str) -> QuerySet[M]:
    """The only way recall reaches memory rows: guarded, then routed to the heavy-read repo."""
    return require_scope(queryset, tenant_id=tenant_id, subject_id=subject_id).using(HEAVY_READ)
