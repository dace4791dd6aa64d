"""The export/import file formats: Markdown files with YAML front matter, or JSON Lines.

Pure encoding and decoding of :class:`ArticleRecord`; reading articles out is
``selectors.transfer``, writing them in is ``services.transfer``, and the management commands
only move files. A record names its project by slug and its links by the target's title, so
an export can be imported into another tenant (or another deployment).

A Markdown file looks like::

    ---
    title: Friday deploy freeze
    category: decision
    tags: [deploy, process]
    status: published
    ...
    ---
    The body, exactly as stored.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any

import yaml
from django.utils.text import slugify

FRONT_MATTER_FENCE = "---\n"
FILENAME_TITLE_CHARS = 80


class RecordError(ValueError):
    """A file or line that is not a valid article record."""


@dataclass(frozen=True)
class LinkRecord:
    kind: str
    to: str  # the target article's title


@dataclass(frozen=True)
class ArticleRecord:
    title: str
    body: str
    category: str
    tags: list[str] = field(default_factory=list)
    status: str = "published"
    visibility: str = "tenant"
    owner_agent_id: str = ""
    source: str = "manual"
    source_memory_id: str | None = None
    project: str | None = None  # the project's slug
    links: list[LinkRecord] = field(default_factory=list)
    # Informational: where the record came from. Import never reuses ids.
    id: str | None = None
    created_at: str | None = None

    def front_matter(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("body")
        return data

    def filename(self) -> str:
        stem = slugify(self.title)[:FILENAME_TITLE_CHARS].strip("-") or "article"
        suffix = (self.id or uuid.uuid4().hex)[:8]
        return f"{stem}-{suffix}.md"


_FIELDS = set(ArticleRecord.__dataclass_fields__)


def record_from_mapping(data: object) -> ArticleRecord:
    if not isinstance(data, dict):
        raise RecordError("an article record must be a mapping")
    unknown = set(data) - _FIELDS
    if unknown:
        raise RecordError(f"unknown fields: {', '.join(sorted(unknown))}")
    missing = [name for name in ("title", "body", "category") if not data.get(name)]
    if missing:
        raise RecordError(f"missing fields: {', '.join(missing)}")
    values = dict(data)
    links = values.pop("links", None) or []
    if not isinstance(links, list) or not all(
        isinstance(link, dict) and {"kind", "to"} <= set(link) for link in links
    ):
        raise RecordError("links must be a list of {kind, to} mappings")
    tags = values.get("tags") or []
    if not isinstance(tags, list):
        raise RecordError("tags must be a list")
    values["tags"] = [str(tag) for tag in tags]
    for name in ("title", "body", "category", "status", "visibility", "source"):
        if name in values and not isinstance(values[name], str):
            raise RecordError(f"{name} must be a string")
    for name in ("owner_agent_id",):
        values[name] = str(values.get(name) or "")
    for name in ("source_memory_id", "project", "id", "created_at"):
        values[name] = None if values.get(name) in (None, "") else str(values[name])
    return ArticleRecord(
        **values,
        links=[LinkRecord(kind=str(link["kind"]), to=str(link["to"])) for link in links],
    )


def to_markdown(record: ArticleRecord) -> str:
    front = yaml.safe_dump(
        record.front_matter(), sort_keys=False, allow_unicode=True, default_flow_style=None
    )
    return f"{FRONT_MATTER_FENCE}{front}{FRONT_MATTER_FENCE}{record.body}"


def from_markdown(text: str) -> ArticleRecord:
    if not text.startswith(FRONT_MATTER_FENCE):
        raise RecordError("a Markdown article must start with a '---' front matter block")
    end = text.find("\n" + FRONT_MATTER_FENCE, len(FRONT_MATTER_FENCE) - 1)
    if end < 0:
        raise RecordError("the front matter block is not closed with '---'")
    try:
        front = yaml.safe_load(text[len(FRONT_MATTER_FENCE) : end + 1])
    except yaml.YAMLError as exc:
        raise RecordError(f"invalid front matter: {exc}") from exc
    if not isinstance(front, dict):
        raise RecordError("the front matter must be a mapping")
    # The body is everything after the closing fence, byte for byte.
    body = text[end + 1 + len(FRONT_MATTER_FENCE) :]
    return record_from_mapping({**front, "body": body})


def to_json_line(record: ArticleRecord) -> str:
    return json.dumps(asdict(record), ensure_ascii=False, sort_keys=True)


def from_json_line(line: str) -> ArticleRecord:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"invalid JSON: {exc.msg}") from exc
    return record_from_mapping(data)


# ----------------------------------------------------------------------------- exact restore
#
# ``memory_export`` / ``memory_import`` move a tenant within (or between) deployments of the
# same embedding dimension and must reproduce it exactly. They reuse :class:`ArticleRecord`
# for an article's portable fields (its ``id`` and ``created_at`` become authoritative there)
# and carry the stored state a portable record leaves out in :class:`ArticleState`; links
# travel by article id, not by title.


@dataclass(frozen=True)
class ArticleState:
    """The stored state of an article beyond its :class:`ArticleRecord`."""

    project_id: uuid.UUID | None
    embedding: list[float] | None
    embedding_content_hash: str
    embedded_at: datetime | None
    version: int
    published_at: datetime | None
    updated_at: datetime
    #: The fingerprint of the model that made ``embedding``; "" when unknown (an export
    #: written before vectors carried it): recall then treats the vector as another model's,
    #: and the background migration re-embeds it.
    embedding_model: str = ""


#: The fields of :class:`ArticleState`, each also the ``Article`` column it is read from.
ARTICLE_STATE_FIELDS = tuple(state_field.name for state_field in fields(ArticleState))


@dataclass(frozen=True)
class ArticleSnapshot:
    """One article exactly as stored: ``record.id`` and ``record.created_at`` are set, and
    ``record.links`` is empty (links are :class:`LinkSnapshot`s)."""

    record: ArticleRecord
    state: ArticleState


@dataclass(frozen=True)
class LinkSnapshot:
    from_article_id: uuid.UUID
    to_article_id: uuid.UUID
    kind: str
    created_at: datetime
    updated_at: datetime
