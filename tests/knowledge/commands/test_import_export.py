"""knowledge_export / knowledge_import: Markdown and JSON Lines round trips."""

from __future__ import annotations

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command

from apps.knowledge.models import Article, ArticleLink
from apps.knowledge.services import article_link_create
from apps.knowledge.transfer import (
    ArticleRecord,
    LinkRecord,
    RecordError,
    from_json_line,
    from_markdown,
    to_json_line,
    to_markdown,
)
from tests.knowledge.helpers import CURATOR, publish
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

FIELDS = (
    "title",
    "body",
    "category",
    "tags",
    "status",
    "visibility",
    "owner_agent_id",
    "source",
    "source_memory_id",
)


@pytest.fixture
def source_wiki(tenant):
    project = ProjectFactory.create(tenant=tenant, slug="billing")
    freeze = publish(
        tenant,
        "Friday deploy freeze",
        "# Freeze\n\n- No deploys after 14:00 UTC on Fridays.\n- Hotfixes only.\n",
        category="decision",
        tags=["deploy", "alias:deploy freeze"],
    )
    private = publish(
        tenant,
        "Graduated: prefers dark mode",
        "The user prefers dark mode.",
        visibility="owner",
        owner_agent_id="agent-a",
        source="graduated",
        source_memory_id=uuid.uuid4(),
        status="draft",
    )
    billing = publish(
        tenant, "Invoices are immutable", "Never edit an issued invoice.", project_id=project.pk
    )
    publish(tenant, "Old", "Archived body.", status="archived")
    article_link_create(
        tenant=tenant,
        viewer=CURATOR,
        from_article_id=freeze.pk,
        to_article_id=billing.pk,
        kind="relates_to",
    )
    return [freeze, private, billing]


def snapshot(tenant) -> list[tuple]:
    return sorted(
        Article.objects.filter(tenant=tenant)
        .exclude(status="archived")
        .values_list(*FIELDS, "project__slug")
    )


def run(*args) -> dict:
    out = StringIO()
    call_command(*args, "--json", stdout=out, stderr=StringIO())
    data: dict = json.loads(out.getvalue())
    return data


@pytest.mark.parametrize(("_case", "target"), [("markdown", "export"), ("jsonl", "export.jsonl")])
def test_an_export_imports_into_another_tenant_unchanged(
    tenant, other_tenant, source_wiki, tmp_path, _case, target
):
    # given
    ProjectFactory.create(tenant=other_tenant, slug="billing")
    path = tmp_path / target

    # when
    exported = run("knowledge_export", str(path), "--tenant", tenant.slug)
    imported = run("knowledge_import", str(path), "--tenant", other_tenant.slug, "--embed-now")

    # then
    assert exported["exported"] == 3
    assert (imported["created"], imported["duplicate"], imported["failed"]) == (3, 0, 0)
    assert (imported["links_applied"], imported["embedded"], imported["errors"]) == (1, 3, [])
    assert snapshot(other_tenant) == snapshot(tenant)
    link = ArticleLink.objects.get(tenant=other_tenant)
    assert (link.from_article.title, link.to_article.title, link.kind) == (
        "Friday deploy freeze",
        "Invoices are immutable",
        "relates_to",
    )


def test_importing_the_same_export_twice_creates_nothing_the_second_time(
    tenant, other_tenant, source_wiki, tmp_path
):
    # given
    ProjectFactory.create(tenant=other_tenant, slug="billing")
    run("knowledge_export", str(tmp_path), "--tenant", tenant.slug)
    run("knowledge_import", str(tmp_path), "--tenant", other_tenant.slug)
    before = snapshot(other_tenant)

    # when
    again = run("knowledge_import", str(tmp_path), "--tenant", other_tenant.slug)

    # then
    assert (again["created"], again["duplicate"], again["failed"]) == (0, 3, 0)
    assert snapshot(other_tenant) == before


def test_archived_articles_are_exported_only_when_asked(tenant, source_wiki, tmp_path):
    # when
    default = run("knowledge_export", str(tmp_path / "a.jsonl"), "--tenant", tenant.slug)
    everything = run(
        "knowledge_export", str(tmp_path / "b.jsonl"), "--tenant", tenant.slug, "--include-archived"
    )

    # then
    assert (default["exported"], everything["exported"]) == (3, 4)


def test_bad_files_and_unknown_projects_are_reported_and_the_rest_imported(other_tenant, tmp_path):
    # given
    good = ArticleRecord(title="Good", body="Fine.", category="finding")
    orphan = ArticleRecord(
        title="Orphan", body="Its project is missing.", category="finding", project="nope"
    )
    (tmp_path / "good.md").write_text(to_markdown(good), encoding="utf-8")
    (tmp_path / "orphan.md").write_text(to_markdown(orphan), encoding="utf-8")
    (tmp_path / "broken.md").write_text("no front matter here", encoding="utf-8")

    # when
    report = run("knowledge_import", str(tmp_path), "--tenant", other_tenant.slug)

    # then
    assert (report["created"], report["failed"], report["unreadable"]) == (1, 1, 1)
    assert report["errors"] == [
        "Orphan: invalid_project: no project with slug 'nope'",
        "broken.md: a Markdown article must start with a '---' front matter block",
    ]
    assert list(Article.objects.filter(tenant=other_tenant).values_list("title", flat=True)) == [
        "Good"
    ]


def test_records_round_trip_through_both_encodings_byte_for_byte():
    # given
    record = ArticleRecord(
        title="Ünïcode: a title",
        body="---\nA body that itself contains a fence.\n\n  indented  \n",
        category="reference",
        tags=["a", "alias:b c"],
        links=[LinkRecord(kind="supersedes", to="Older")],
        id=str(uuid.uuid4()),
    )

    # then
    assert from_markdown(to_markdown(record)) == record
    assert from_json_line(to_json_line(record)) == record


@pytest.mark.parametrize(
    ("_case", "line", "message"),
    [
        ("not_json", "{", "invalid JSON"),
        ("not_a_mapping", "[1]", "must be a mapping"),
        ("missing_body", '{"title": "t", "category": "finding"}', "missing fields: body"),
        (
            "unknown_field",
            '{"title": "t", "body": "b", "category": "c", "x": 1}',
            "unknown fields: x",
        ),
    ],
)
def test_invalid_records_are_refused_with_a_reason(_case, line, message):
    with pytest.raises(RecordError, match=message):
        from_json_line(line)
