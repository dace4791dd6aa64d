"""Every table of the project's apps is keyed for distribution by tenant, or is a documented
reference table (apps/core/db/distribution.py, docs/deployment.md "Sharding by tenant").

Checked twice: over the models (what Django declares and would create) and over the live
catalog of the test database (what the migrations built, raw-SQL tables included).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import IntegrityError, connection, models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models.expressions import F

from apps.core.db.distribution import (
    DISTRIBUTION_COLUMN,
    REFERENCE_TABLES,
    TABLES_WITHOUT_PRIMARY_KEY,
    schema_tables,
)
from apps.memory.models import Memory
from tests.memory.factories import MemoryFactory
from tests.projects.factories import ProjectFactory
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db


def _project_models() -> list[type[models.Model]]:
    return [
        model
        for model in apps.get_models()
        if model._meta.app_config is not None
        and model._meta.app_config.name.startswith("apps.")
        and model._meta.managed
        and not model._meta.proxy
    ]


def _names_tenant(expression: object) -> bool:
    name = getattr(expression, "name", None) if isinstance(expression, F) else None
    return name in {"tenant", DISTRIBUTION_COLUMN}


def _has_db_constraint(field: models.ForeignKey) -> bool:
    return bool(getattr(field, "db_constraint", True))


def model_violations(model: type[models.Model]) -> list[str]:
    """What ``model`` declares that a tenant-sharded database could not enforce."""
    table = model._meta.db_table
    relations = [
        field
        for field in model._meta.concrete_fields
        if isinstance(field, models.ForeignKey) and field.remote_field is not None
    ]
    if table in REFERENCE_TABLES:
        return [
            f"{table}.{field.column}: a reference table points at the distributed "
            f"{field.related_model._meta.db_table}"
            for field in relations
            if field.related_model._meta.db_table not in REFERENCE_TABLES
        ]
    problems = []
    columns = {field.column: field for field in model._meta.concrete_fields}
    tenant = columns.get(DISTRIBUTION_COLUMN)
    if tenant is None or tenant.null:
        problems.append(f"{table}: no NOT NULL {DISTRIBUTION_COLUMN}")
    for field in relations:
        distributed_target = field.related_model._meta.db_table not in REFERENCE_TABLES
        if distributed_target and _has_db_constraint(field):
            problems.append(
                f"{table}.{field.column}: a one-column foreign key to a distributed table "
                "(declare db_constraint=False and the (tenant_id, …) key in a migration)"
            )
    for column in model._meta.concrete_fields:
        if column.unique and not column.primary_key and column.column != DISTRIBUTION_COLUMN:
            problems.append(f"{table}.{column.column}: unique without {DISTRIBUTION_COLUMN}")
    for constraint in model._meta.constraints:
        if not isinstance(constraint, models.UniqueConstraint):
            continue
        fields = {model._meta.get_field(name).column for name in constraint.fields}
        if DISTRIBUTION_COLUMN not in fields and not any(
            _names_tenant(expression) for expression in constraint.expressions
        ):
            problems.append(f"{table}: unique constraint {constraint.name} lacks the tenant")
    for together in model._meta.unique_together:
        if DISTRIBUTION_COLUMN not in {model._meta.get_field(name).column for name in together}:
            problems.append(f"{table}: unique_together {together} lacks the tenant")
    return problems


@dataclass(frozen=True)
class CatalogTable:
    name: str
    columns: dict[int, tuple[str, bool]]  # attnum -> (name, not null)

    def attnum(self, column: str) -> int | None:
        return next((num for num, (name, _) in self.columns.items() if name == column), None)


def _table(cursor: CursorWrapper, name: str) -> CatalogTable:
    cursor.execute(
        "SELECT attnum, attname, attnotnull FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [name],
    )
    return CatalogTable(name, {num: (col, notnull) for num, col, notnull in cursor.fetchall()})


def catalog_violations(cursor: CursorWrapper, table: str, *, reference: set[str]) -> list[str]:
    """What the catalog holds on ``table`` that keeps it from being distributed by tenant (or,
    for a reference table, from being copied to every node)."""
    cursor.execute(
        "SELECT conname, confrelid::regclass::text, conkey, confkey FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype = 'f'",
        [table],
    )
    foreign_keys = cursor.fetchall()
    if table in reference:
        return [
            f"{table}: reference table with foreign key {name} to distributed {target}"
            for name, target, _, _ in foreign_keys
            if target not in reference
        ]
    problems = []
    this = _table(cursor, table)
    tenant = this.attnum(DISTRIBUTION_COLUMN)
    if tenant is None or not this.columns[tenant][1]:
        return [f"{table}: no NOT NULL {DISTRIBUTION_COLUMN}"]
    cursor.execute(
        "SELECT index.relname, x.indisprimary, x.indkey::int2[] FROM pg_index x "
        "JOIN pg_class index ON index.oid = x.indexrelid "
        "WHERE x.indrelid = %s::regclass AND x.indisunique",
        [table],
    )
    unique_indexes = cursor.fetchall()
    if table not in TABLES_WITHOUT_PRIMARY_KEY and not any(pk for _, pk, _ in unique_indexes):
        problems.append(f"{table}: no primary key")
    for name, primary, keys in unique_indexes:
        if tenant not in keys:
            kind = "primary key" if primary else "unique index"
            problems.append(f"{table}: {kind} {name} lacks {DISTRIBUTION_COLUMN}")
    for name, target, keys, target_keys in foreign_keys:
        if target in reference:
            continue
        target_tenant = _table(cursor, target).attnum(DISTRIBUTION_COLUMN)
        if (tenant, target_tenant) not in zip(keys, target_keys, strict=True):
            problems.append(
                f"{table}: foreign key {name} to {target} does not pair "
                f"{DISTRIBUTION_COLUMN} with {DISTRIBUTION_COLUMN}"
            )
    return problems


def test_every_model_is_keyed_by_tenant_or_a_reference_table():
    problems = [problem for model in _project_models() for problem in model_violations(model)]

    assert problems == []


def test_every_table_in_the_catalog_is_keyed_by_tenant_or_a_reference_table():
    with connection.cursor() as cursor:
        tables, _ = schema_tables(cursor)
        problems = [
            problem
            for table in tables
            for problem in catalog_violations(cursor, table, reference=set(REFERENCE_TABLES))
        ]

    assert problems == []
    # Every documented exception names a table that exists.
    assert set(REFERENCE_TABLES) - set(tables) == set()
    assert set(TABLES_WITHOUT_PRIMARY_KEY) - set(tables) == set()


def test_every_foreign_key_django_does_not_constrain_is_a_tenant_key_in_the_catalog():
    expected = {
        (model._meta.db_table, field.column, field.related_model._meta.db_table)
        for model in _project_models()
        for field in model._meta.concrete_fields
        if isinstance(field, models.ForeignKey) and not _has_db_constraint(field)
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text "
            "FROM pg_constraint c JOIN pg_attribute a "
            "ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
            "WHERE c.contype = 'f' AND cardinality(c.conkey) = 2 "
            "AND a.attname <> %s AND c.connamespace = 'public'::regnamespace",
            [DISTRIBUTION_COLUMN],
        )
        declared = set(cursor.fetchall())

    assert expected - declared == set()
    assert len(expected) == 8


@pytest.mark.parametrize(
    ("_case", "ddl", "problem"),
    [
        (
            "primary_key_without_tenant",
            "CREATE TEMP TABLE probe (id int PRIMARY KEY, tenant_id int NOT NULL)",
            "probe: primary key probe_pkey lacks tenant_id",
        ),
        (
            "unique_without_tenant",
            "CREATE TEMP TABLE probe (id int, tenant_id int NOT NULL, slug text UNIQUE, "
            "PRIMARY KEY (tenant_id, id))",
            "probe: unique index probe_slug_key lacks tenant_id",
        ),
        (
            "no_tenant_column",
            "CREATE TEMP TABLE probe (id int PRIMARY KEY)",
            "probe: no NOT NULL tenant_id",
        ),
        (
            "no_primary_key",
            "CREATE TEMP TABLE probe (id int, tenant_id int NOT NULL)",
            "probe: no primary key",
        ),
        (
            "foreign_key_on_the_id_alone",
            "CREATE TEMP TABLE parent (id int, tenant_id int NOT NULL, "
            "PRIMARY KEY (tenant_id, id));"
            "CREATE TEMP TABLE probe (id int, tenant_id int NOT NULL, parent_id int, "
            "PRIMARY KEY (tenant_id, id), "
            "FOREIGN KEY (tenant_id, parent_id) REFERENCES parent (id, tenant_id))",
            "probe: foreign key probe_tenant_id_parent_id_fkey to parent does not pair "
            "tenant_id with tenant_id",
        ),
    ],
)
def test_the_catalog_check_finds_each_kind_of_problem(_case, ddl, problem):
    with connection.cursor() as cursor:
        cursor.execute(ddl)
        problems = catalog_violations(cursor, "probe", reference=set())

    assert problems == [problem]


def test_the_catalog_check_refuses_a_reference_table_pointing_at_a_distributed_one():
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE parent (id int, tenant_id int NOT NULL, "
            "PRIMARY KEY (id, tenant_id));"
            "CREATE TEMP TABLE probe (id int PRIMARY KEY, parent_id int, parent_tenant int, "
            "FOREIGN KEY (parent_id, parent_tenant) REFERENCES parent (id, tenant_id))"
        )
        problems = catalog_violations(cursor, "probe", reference={"probe"})

    assert problems == [
        "probe: reference table with foreign key probe_parent_id_parent_tenant_fkey "
        "to distributed parent"
    ]


def test_the_plan_distributes_each_table_after_the_tables_it_references():
    out = StringIO()
    call_command("distribution_plan", "--json", stdout=out)
    plan = json.loads(out.getvalue())
    with connection.cursor() as cursor:
        project, local = schema_tables(cursor)
        cursor.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
            "WHERE contype = 'f' AND connamespace = 'public'::regnamespace "
            "AND conrelid <> confrelid"
        )
        foreign_keys = cursor.fetchall()

    assert plan["reference_tables"] == [
        "memory_erasurereceipt",
        "tenancy_tenant",
        "tenancy_apikey",
    ]
    assert sorted(plan["distributed_tables"]) == sorted(set(project) - set(REFERENCE_TABLES))
    assert plan["local_tables"] == local
    assert "memory_memory" in plan["distributed_tables"]
    assert "django_migrations" in local
    order = plan["reference_tables"] + plan["distributed_tables"]
    for table, target in foreign_keys:
        if table in order:
            assert order.index(target) < order.index(table), (table, target)
    anchor = plan["distributed_tables"][0]
    assert plan["statements"] == [
        *(f"SELECT create_reference_table('{table}');" for table in plan["reference_tables"]),
        f"SELECT create_distributed_table('{anchor}', 'tenant_id');",
        *(
            f"SELECT create_distributed_table('{table}', 'tenant_id', colocate_with => '{anchor}');"
            for table in plan["distributed_tables"][1:]
        ),
    ]


POINT_AT = {
    "project_id": "UPDATE memory_memory SET project_id = %s WHERE id = %s",
    "superseded_by_id": "UPDATE memory_memory SET superseded_by_id = %s WHERE id = %s",
}


def _point_and_check(column, *, target, memory):
    with connection.cursor() as cursor:
        cursor.execute(POINT_AT[column], [target, memory.pk])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.parametrize(
    ("_case", "column"),
    [("project", "project_id"), ("successor", "superseded_by_id")],
)
def test_a_memory_cannot_point_at_another_tenants_row(_case, column):
    # Given a memory of one tenant, and a project and a memory of another
    memory = MemoryFactory.create()
    other_tenant = TenantFactory.create()
    targets = {
        "project_id": ProjectFactory.create(tenant=other_tenant).pk,
        "superseded_by_id": MemoryFactory.create(tenant=other_tenant).pk,
    }
    # When the memory is made to point at the other tenant's row, then the two-column key
    # refuses it (checked at commit; forced here)
    with pytest.raises(IntegrityError), transaction.atomic():
        _point_and_check(column, target=targets[column], memory=memory)

    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.project_id, stored.superseded_by_id) == (None, None)


def test_a_memory_can_point_at_its_own_tenants_project():
    memory = MemoryFactory.create()
    project = ProjectFactory.create(tenant=memory.tenant)
    _point_and_check("project_id", target=project.pk, memory=memory)

    assert Memory.objects.get(pk=memory.pk).project_id == project.pk
