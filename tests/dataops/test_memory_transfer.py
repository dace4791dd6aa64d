import base64
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from apps.knowledge.models import Article
from apps.memory.models import Memory, SessionMemory
from apps.projects.models import Project
from tests.dataops.helpers import build_corpus, run_json, table_counts, tenant_rows, wipe
from tests.knowledge.helpers import publish
from tests.projects.factories import ProjectFactory


@pytest.fixture
def project(tenant):
    return ProjectFactory.create(tenant=tenant, slug="backend")


@pytest.fixture
def corpus(tenant, project):
    return build_corpus(tenant, project)


def _export(tenant, path, *extra):
    return run_json("memory_export", "--tenant", tenant.slug, "--output", str(path), *extra)


def _import(tenant, path, *extra):
    return run_json("memory_import", "--tenant", tenant.slug, "--input", str(path), *extra)


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _without_expired(rows, expired_turn):
    expected = dict(rows)
    expected["turns"] = [turn for turn in rows["turns"] if turn[4] != expired_turn.content]
    return expected


def test_export_writes_header_then_records_of_every_type(tenant, corpus, project, tmp_path):
    path = tmp_path / "acme.jsonl"

    summary = _export(tenant, path)

    records = _lines(path)
    header = records[0]
    assert header["type"] == "header"
    assert header["format"] == "engram-export"
    assert header["format_version"] == 1
    assert header["tenant"] == tenant.slug
    assert header["tenant_id"] == str(tenant.pk)
    assert header["embedding_dimensions"] == 384
    assert header["vector_encoding"] == "base64-float32-le"
    assert header["subject"] is None
    assert header["includes_knowledge"] is True
    assert header["projects"] == {str(project.pk): "backend"}
    counts = {
        "article": 4,
        "article_link": 2,
        "memory": 5,
        "session_turn": 5,
        "session_promotion": 1,
    }
    assert header["counts"] == counts
    assert summary["counts"] == counts
    assert [r["type"] for r in records[1:]] == (
        ["article"] * 4
        + ["article_link"] * 2
        + ["memory"] * 5
        + ["session_turn"] * 5
        + ["session_promotion"]
    )
    first = next(r for r in records if r["type"] == "memory" and r["text"].startswith("The build"))
    vector = np.frombuffer(base64.b64decode(first["embedding"]), dtype="<f4")
    stored = np.asarray(Memory.objects.get(pk=first["id"]).embedding, dtype="<f4")
    assert vector.tobytes() == stored.tobytes()  # the float32 values pgvector stores, bit for bit


def test_export_wipe_import_reproduces_the_tenant_exactly(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    before = tenant_rows(tenant)
    _export(tenant, path)
    wipe(tenant)
    assert tenant_rows(tenant)["memories"] == []

    report = _import(tenant, path)

    assert report["counts"] == {
        "article": {"created": 4, "skipped": 0},
        "article_link": {"created": 2, "skipped": 0},
        "memory": {"created": 5, "skipped": 0},
        "session_turn": {"created": 4, "skipped": 0},
        "session_promotion": {"created": 1, "skipped": 0},
    }
    assert report["expired_turns_skipped"] == 1
    assert report["source_tenant"] == tenant.slug
    assert report["pending_embeddings"] == 1
    after = tenant_rows(tenant)
    expected = _without_expired(before, corpus["expired_turn"])
    for key in expected:
        assert after[key] == expected[key], key
    # Spot checks of what the field-by-field comparison covers.
    memories = {m.text: m for m in Memory.objects.filter(tenant=tenant)}
    old, new = memories["Deploys are on Fridays."], memories["Deploys are on Thursdays."]
    assert old.superseded_by_id == new.pk
    assert memories["The user prefers tabs."].graduated_article_id == corpus["articles"][2].pk
    assert [t.content for t in SessionMemory.objects.filter(session_id="s1").order_by("seq")] == [
        "hello",
        "hi there",
        "hello",
    ]
    # Provenance and event time came along; the seqs point at the re-created turn.
    first_turn = SessionMemory.objects.filter(session_id="s1").order_by("seq").first()
    assert (old.source_turn_seqs, old.compiler, old.occurred_at.isoformat()) == (
        [first_turn.seq],
        "heuristic",
        "2023-05-07T00:00:00+00:00",
    )
    assert first_turn.occurred_at.isoformat() == "2023-05-08T13:56:00+00:00"


def test_a_file_without_event_time_or_provenance_imports_as_written(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    records = _lines(path)
    for record in records:
        for name in ("occurred_at", "source_turn_seqs", "compiler"):
            record.pop(name, None)
    _write(path, records)
    wipe(tenant)

    _import(tenant, path)

    memories = list(Memory.objects.filter(tenant=tenant))
    assert len(memories) == 5
    assert all(m.occurred_at == m.created_at for m in memories)
    assert all((m.source_turn_seqs, m.compiler) == ([], "") for m in memories)
    turns = list(SessionMemory.objects.filter(tenant=tenant))
    assert len(turns) == 4
    assert all(t.occurred_at == t.created_at for t in turns)


def test_a_file_without_valid_time_imports_with_it_derived(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    records = _lines(path)
    for record in records:
        for name in ("valid_from", "valid_to", "supersedes", "supersede_reason", "conflicts_with"):
            record.pop(name, None)
    _write(path, records)
    wipe(tenant)

    _import(tenant, path)

    memories = {m.text: m for m in Memory.objects.filter(tenant=tenant)}
    assert all(m.valid_from == m.occurred_at for m in memories.values())
    assert all(m.conflicts_with == [] for m in memories.values())
    old, new = memories["Deploys are on Fridays."], memories["Deploys are on Thursdays."]
    # The old version ends where its successor began, never before its own start.
    assert old.valid_to == max(new.valid_from, old.valid_from)
    assert (new.supersedes, new.supersede_reason) == ([old.pk], "paraphrase")
    assert [m.valid_to for m in memories.values() if m.superseded_by_id is None] == [None] * 4


@pytest.mark.parametrize("field", ["supersedes", "conflicts_with"])
def test_a_link_to_another_subjects_memory_is_refused(tenant, corpus, tmp_path, field):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    records = _lines(path)
    memories = [r for r in records if r["type"] == "memory"]
    theirs = next(m for m in memories if m["subject_id"] == "agent-b")
    mine = next(m for m in memories if m["subject_id"] == "agent-a")
    mine[field] = [theirs["id"]]
    _write(path, records)
    counts = table_counts()

    with pytest.raises(CommandError, match="belongs to another subject"):
        _import(tenant, path)

    assert table_counts() == counts


def test_a_link_to_a_memory_nowhere_is_refused(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    records = _lines(path)
    next(r for r in records if r["type"] == "memory")["conflicts_with"] = [
        "00000000-0000-4000-8000-000000000001"
    ]
    _write(path, records)

    with pytest.raises(CommandError, match="is in neither the file nor the tenant"):
        _import(tenant, path)


def test_reimport_adds_nothing(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    _import(tenant, path)
    rows, counts = tenant_rows(tenant), table_counts()

    report = _import(tenant, path)

    assert report["created"] == 0
    assert report["counts"] == {
        "article": {"created": 0, "skipped": 4},
        "article_link": {"created": 0, "skipped": 2},
        "memory": {"created": 0, "skipped": 5},
        "session_turn": {"created": 0, "skipped": 4},
        "session_promotion": {"created": 0, "skipped": 1},
    }
    assert tenant_rows(tenant) == rows
    assert table_counts() == counts


def test_import_into_an_unwiped_tenant_is_a_no_op(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    rows = tenant_rows(tenant)

    report = _import(tenant, path)

    assert report["created"] == 0
    assert tenant_rows(tenant) == rows


def test_subject_export_skips_knowledge_unless_asked(tenant, corpus, tmp_path):
    path = tmp_path / "a.jsonl"

    summary = _export(tenant, path, "--subject", "agent-a")

    assert summary["counts"] == {
        "article": 0,
        "article_link": 0,
        "memory": 4,
        "session_turn": 4,
        "session_promotion": 1,
    }
    with_knowledge = _export(
        tenant, tmp_path / "b.jsonl", "--subject", "agent-a", "--include-knowledge"
    )
    assert with_knowledge["counts"]["article"] == 4
    assert {r["subject_id"] for r in _lines(path)[1:]} == {"agent-a"}


def test_subject_import_without_knowledge_unlinks_missing_graduated_articles(
    tenant, corpus, tmp_path
):
    path = tmp_path / "a.jsonl"
    _export(tenant, path, "--subject", "agent-a")
    Memory.objects.filter(tenant=tenant).delete()
    SessionMemory.objects.filter(tenant=tenant).delete()
    Article.objects.filter(pk=corpus["articles"][2].pk).delete()

    report = _import(tenant, path)

    assert report["graduated_articles_unlinked"] == 1
    hot = Memory.objects.get(tenant=tenant, text="The user prefers tabs.")
    assert hot.graduated_article_id is None
    assert hot.graduated_global is True
    assert hot.graduated_at is not None


def test_import_into_another_tenant_maps_projects_by_slug(tenant, other_tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    before = tenant_rows(tenant)
    wipe(tenant)
    target_project = ProjectFactory.create(tenant=other_tenant, slug="backend")

    report = _import(other_tenant, path)

    assert report["source_tenant"] == tenant.slug
    assert report["counts"]["memory"] == {"created": 5, "skipped": 0}
    assert list(report["projects_remapped"].values()) == [str(target_project.pk)]
    assert Memory.objects.filter(tenant=tenant).count() == 0
    moved = Memory.objects.get(tenant=other_tenant, text="The build uses Bazel.")
    assert moved.project_id == target_project.pk
    assert Article.objects.get(tenant=other_tenant, title="Agent notes").project_id == (
        target_project.pk
    )
    assert sorted(m[0] for m in tenant_rows(other_tenant)["memories"]) == sorted(
        m[0] for m in before["memories"]
    )


def test_missing_projects_fail_with_their_ids_or_import_as_global(
    tenant, corpus, project, tmp_path
):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    Project.objects.filter(pk=project.pk).delete()
    counts = table_counts()

    with pytest.raises(CommandError, match=f"missing_projects: .*{project.pk} \\(backend\\)"):
        _import(tenant, path)
    assert table_counts() == counts

    report = _import(tenant, path, "--drop-missing-projects")

    assert report["projects_dropped"] == [str(project.pk)]
    assert Memory.objects.get(tenant=tenant, text="The build uses Bazel.").project_id is None
    assert Article.objects.get(tenant=tenant, title="Agent notes").project_id is None


def test_unknown_tenant_fails_cleanly(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)

    with pytest.raises(CommandError, match="not_found") as exc:
        _import(type("T", (), {"slug": "no-such-tenant"}), path)
    assert exc.value.returncode == 1
    with pytest.raises(CommandError, match="not_found"):
        _export(type("T", (), {"slug": "no-such-tenant"}), tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("_case", "corrupt", "message"),
    [
        ("bad_json", lambda r: "{not json", "line 8: invalid JSON"),
        ("bad_confidence", lambda r: {**r, "confidence": 2}, "line 8: memory: confidence"),
        ("bad_source", lambda r: {**r, "source": "rumour"}, "line 8: memory: source"),
        (
            "bad_vector",
            lambda r: {**r, "embedding": "AAAA"},
            "line 8: memory: embedding has 0 dimensions, the header says 384",
        ),
        ("unknown_field", lambda r: {**r, "colour": "red"}, "line 8: memory: unknown fields"),
        (
            "unknown_type",
            lambda r: {**r, "type": "gossip"},
            "line 8: record: unknown record type 'gossip'",
        ),
        ("missing_field", lambda r: {k: v for k, v in r.items() if k != "text"}, "line 8"),
    ],
)
def test_a_bad_line_is_reported_by_number_and_nothing_is_written(
    tenant, corpus, tmp_path, _case, corrupt, message
):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[7])
    assert record["type"] == "memory"  # line 8: header, 4 articles, 2 links, then memories
    replaced = corrupt(record)
    lines[7] = replaced if isinstance(replaced, str) else json.dumps(replaced)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = table_counts()

    with pytest.raises(CommandError, match=message) as exc:
        _import(tenant, path)

    assert exc.value.returncode == 1
    assert table_counts() == counts


def test_a_truncated_file_is_refused(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    counts = table_counts()

    with pytest.raises(CommandError, match="promises 5 session_turn record"):
        _import(tenant, path)
    assert table_counts() == counts


def test_a_file_without_header_is_refused(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=r"line 1: .*the first record must be the header"):
        _import(tenant, path)


def _shrink_vectors(records, dimensions):
    header, *rest = records
    header = {**header, "embedding_dimensions": dimensions}
    shrunk = []
    for record in rest:
        if record.get("embedding"):
            vector = np.frombuffer(base64.b64decode(record["embedding"]), dtype="<f4")[:dimensions]
            record = {**record, "embedding": base64.b64encode(vector.tobytes()).decode()}
        shrunk.append(record)
    return [header, *shrunk]


def test_a_dimension_mismatch_is_refused_unless_embeddings_are_dropped(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    _write(path, _shrink_vectors(_lines(path), 8))
    counts = table_counts()

    with pytest.raises(CommandError, match="dimension_mismatch: The file holds 8-dimensional"):
        _import(tenant, path)
    assert table_counts() == counts

    report = _import(tenant, path, "--drop-embeddings")

    assert report["embeddings_dropped"] is True
    assert report["pending_embeddings"] == 5 + 3  # every memory, every non-archived article
    assert Memory.objects.filter(tenant=tenant, embedding__isnull=False).count() == 0
    assert Memory.objects.filter(tenant=tenant, embedded_at__isnull=False).count() == 0


def test_ids_of_another_tenant_are_refused(tenant, other_tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    before, counts = tenant_rows(tenant), table_counts()

    with pytest.raises(CommandError, match="id_collision: 5 memory id") as exc:
        _import(other_tenant, path)

    assert exc.value.returncode == 1
    assert table_counts() == counts
    assert tenant_rows(tenant) == before
    assert tenant_rows(other_tenant)["memories"] == []


def test_article_ids_of_another_tenant_are_refused(tenant, other_tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    Memory.objects.filter(tenant=tenant).delete()
    ProjectFactory.create(tenant=other_tenant, slug="backend")
    counts = table_counts()

    with pytest.raises(CommandError, match="id_collision: 4 article id"):
        _import(other_tenant, path)
    assert table_counts() == counts


def test_a_live_title_taken_by_another_article_is_refused(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    publish(tenant, "Deploy guide", "A different body.", embed=False)
    counts = table_counts()

    with pytest.raises(CommandError, match="title_taken"):
        _import(tenant, path)
    assert table_counts() == counts


def test_export_to_stdout_and_import_from_stdin(tenant, corpus, tmp_path, monkeypatch):
    out, err = StringIO(), StringIO()
    call_command("memory_export", "--tenant", tenant.slug, stdout=out, stderr=err)
    assert "Exported" in err.getvalue()
    assert json.loads(out.getvalue().splitlines()[0])["type"] == "header"
    wipe(tenant)
    monkeypatch.setattr("sys.stdin", StringIO(out.getvalue()))

    report = run_json("memory_import", "--tenant", tenant.slug)

    assert report["counts"]["memory"] == {"created": 5, "skipped": 0}


def test_a_superseded_by_link_across_subjects_is_refused(tenant, corpus, tmp_path):
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    records = _lines(path)
    memories = [r for r in records if r["type"] == "memory"]
    victim = next(m for m in memories if m["superseded_by"] is None)
    # Another subject's row claims to be an older version of the victim's memory.
    forged = {
        **next(m for m in memories if m["id"] != victim["id"]),
        "subject_id": victim["subject_id"] + "-other",
        "superseded_by": victim["id"],
    }
    records = [forged if r.get("id") == forged["id"] else r for r in records]
    _write(path, records)
    counts = table_counts()

    with pytest.raises(CommandError, match="belongs to another subject") as exc:
        _import(tenant, path)

    assert exc.value.returncode == 1
    assert table_counts() == counts


def test_a_row_the_database_refuses_mid_copy_leaves_nothing(tenant, corpus, tmp_path):
    # Two new promoted rows of one subject with one text: the file checks pass them (they
    # clash with nothing the tenant holds), the unique index refuses the second during the
    # copy, after every row before it was streamed.
    path = tmp_path / "export.jsonl"
    _export(tenant, path)
    wipe(tenant)
    records = _lines(path)
    memories = [index for index, record in enumerate(records) if record["type"] == "memory"]
    first, last = records[memories[0]], records[memories[-1]]
    last.update(
        source="promoted",
        subject_id=first["subject_id"],
        text=first["text"],
        embedding_content_hash=first["embedding_content_hash"],
        superseded_by=None,
        supersedes=[],
        conflicts_with=[],
    )
    first["source"] = "promoted"
    _write(path, records)
    counts = table_counts()
    derived = _derived_counts()

    with pytest.raises(CommandError, match="refused the import") as exc:
        _import(tenant, path)

    assert exc.value.returncode == 1
    assert table_counts() == counts
    assert _derived_counts() == derived


def _derived_counts():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM memory_search_term), "
            "(SELECT coalesce(sum(live + superseded), 0) FROM memory_scope_usage)"
        )
        return cursor.fetchone()
