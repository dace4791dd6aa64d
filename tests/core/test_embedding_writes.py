"""Writing embeddings back to their rows (apps/core/embedding_writes.py).

The helper is exercised against a temporary table with exactly the columns it documents, so
these tests pin its contract rather than one app's model; the memory and knowledge suites
cover the real tables.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from django.db import connections
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.embedding_writes import store_vectors

pytestmark = pytest.mark.django_db

TABLE = "core_embedding_writes_probe"
TENANT = uuid.UUID("00000000-0000-0000-0000-00000000000a")
OTHER_TENANT = uuid.UUID("00000000-0000-0000-0000-00000000000b")
OLD = [0.0, 0.0, 1.0]
MODEL = "fedcba9876543210"


@pytest.fixture(autouse=True)
def _probe_table(db: None) -> None:
    # Created inside the test's transaction, so it is gone when the test rolls back.
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            f"""
            CREATE TEMPORARY TABLE {TABLE} (
                id uuid PRIMARY KEY,
                tenant_id uuid NOT NULL,
                version integer NOT NULL DEFAULT 1,
                embedding vector,
                embedded_at timestamptz,
                embedding_model text NOT NULL DEFAULT ''
            )
            """
        )


def _insert(
    *, tenant: uuid.UUID = TENANT, version: int = 1, embedding: list[float] | None = None
) -> uuid.UUID:
    pk = uuid.uuid4()
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {TABLE} (id, tenant_id, version, embedding, embedded_at) "  # noqa: S608
            "VALUES (%s, %s, %s, %s::vector, %s)",
            [
                pk,
                tenant,
                version,
                None if embedding is None else str(embedding).replace(" ", ""),
                None if embedding is None else datetime(2020, 1, 1, tzinfo=UTC),
            ],
        )
    return pk


def _row(pk: uuid.UUID) -> tuple[list[float] | None, datetime | None]:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            f"SELECT embedding::text, embedded_at FROM {TABLE} WHERE id = %s",  # noqa: S608
            [pk],
        )
        text, embedded_at = cursor.fetchone()
    vector = None if text is None else [float(value) for value in text.strip("[]").split(",")]
    return vector, embedded_at


def _store(ids: list[uuid.UUID], vectors: list[list[float]], **guards: Any) -> int:
    guards.setdefault("only_unembedded", False)
    guards.setdefault("model", MODEL)
    return store_vectors(table=TABLE, ids=ids, vectors=vectors, **guards)


def _model(pk: uuid.UUID) -> str:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(f"SELECT embedding_model FROM {TABLE} WHERE id = %s", [pk])  # noqa: S608
        return str(cursor.fetchone()[0])


def test_every_vector_written_names_its_model():
    first, second = _insert(), _insert(embedding=OLD)

    _store([first, second], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], model="0123456789abcdef")

    assert _model(first) == _model(second) == "0123456789abcdef"


def test_a_vector_without_a_model_is_refused():
    pending = _insert()

    with pytest.raises(ValueError, match="model"):
        _store([pending], [[1.0, 0.0, 0.0]], model="")

    assert _row(pending) == (None, None)


def test_each_row_gets_its_own_vector_and_a_fresh_embedded_at():
    first, second = _insert(), _insert()
    before = timezone.now()

    written = _store([second, first], [[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]])

    assert written == 2
    assert _row(first)[0] == [1.0, 0.0, 0.0]
    assert _row(second)[0] == [0.0, 2.0, 0.0]
    embedded_at = _row(first)[1]
    assert embedded_at is not None
    assert before <= embedded_at <= timezone.now()


def test_only_unembedded_leaves_rows_that_already_have_a_vector_alone():
    pending = _insert()
    done = _insert(embedding=OLD)
    done_before = _row(done)

    written = _store([pending, done], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], only_unembedded=True)

    assert written == 1  # the skipped row is not counted
    assert _row(pending)[0] == [1.0, 0.0, 0.0]
    assert _row(done) == done_before


def test_without_only_unembedded_existing_vectors_are_overwritten():
    done = _insert(embedding=OLD)

    written = _store([done], [[0.0, 1.0, 0.0]])

    assert written == 1
    vector, embedded_at = _row(done)
    assert vector == [0.0, 1.0, 0.0]
    assert embedded_at is not None
    assert embedded_at.year > 2020


def test_versions_skip_a_row_edited_since_it_was_loaded():
    current = _insert(version=3)
    edited = _insert(version=2)  # loaded at version 1, edited since

    written = _store([current, edited], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], versions=[3, 1])

    assert written == 1
    assert _row(current)[0] == [1.0, 0.0, 0.0]
    assert _row(edited) == (None, None)


def test_tenant_id_skips_another_tenants_row():
    mine = _insert(embedding=OLD)
    theirs = _insert(tenant=OTHER_TENANT, embedding=OLD)
    theirs_before = _row(theirs)

    written = _store([mine, theirs], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], tenant_id=TENANT)

    assert written == 1
    assert _row(mine)[0] == [1.0, 0.0, 0.0]
    assert _row(theirs) == theirs_before


def test_guards_combine():
    # The article on-commit path: still pending AND still at the version embedded.
    ok = _insert(version=1)
    stale = _insert(version=2)
    filled = _insert(version=1, embedding=OLD)

    written = _store(
        [ok, stale, filled],
        [[1.0, 0.0, 0.0]] * 3,
        versions=[1, 1, 1],
        only_unembedded=True,
    )

    assert written == 1
    assert _row(ok)[0] == [1.0, 0.0, 0.0]
    assert _row(stale) == (None, None)
    assert _row(filled)[0] == OLD


def test_unknown_ids_are_skipped_and_not_counted():
    row = _insert()

    written = _store([uuid.uuid4(), row], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])

    assert written == 1
    assert _row(row)[0] == [1.0, 0.0, 0.0]


def test_a_float32_vector_round_trips_exactly():
    vector = np.random.default_rng(11).normal(size=384).astype(np.float32)
    row = _insert()

    _store([row], [vector.tolist()])

    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(f"SELECT embedding::text FROM {TABLE} WHERE id = %s", [row])  # noqa: S608
        (text,) = cursor.fetchone()
    assert np.array_equal(np.array(text.strip("[]").split(","), dtype=np.float32), vector)


@pytest.mark.parametrize(
    ("vectors", "versions"),
    [([[1.0, 0.0, 0.0]], None), ([[1.0, 0.0, 0.0]] * 2, [1])],
    ids=["fewer vectors", "fewer versions"],
)
def test_mismatched_lengths_raise_and_write_nothing(vectors, versions):
    first, second = _insert(), _insert()

    with pytest.raises(ValueError, match="same length"):
        _store([first, second], vectors, versions=versions)

    assert _row(first) == (None, None)
    assert _row(second) == (None, None)
