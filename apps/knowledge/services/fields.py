"""Validation and normalisation of article fields, shared by every write path.

Everything here runs before a transaction opens or a provider is called (DESIGN §6: all input
is validated before any side effect), and raises 422s with stable codes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from apps.knowledge.exceptions import AliasTagReserved, InvalidArticle, InvalidProjectId
from apps.knowledge.models import (
    ALIAS_TAG_PREFIX,
    TAG_MAX_LENGTH,
    ArticleCategory,
    ArticleSource,
    ArticleStatus,
    ArticleVisibility,
)
from apps.knowledge.phrases import normalise_phrase
from apps.knowledge.viewer import Viewer
from apps.projects.selectors import project_exists
from apps.providers.embeddings import embedding_content_hash, normalise_text
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class CleanArticle:
    """Validated, normalised fields of an article about to be written."""

    title: str
    body: str
    category: str
    tags: list[str]
    project_id: uuid.UUID | None
    visibility: str
    owner_agent_id: str
    source: str
    source_memory_id: uuid.UUID | None
    #: Who is charged for it under the per-author quota ("" = nobody: the tenant's alone).
    author_subject_id: str

    @property
    def content_hash(self) -> str:
        return embedding_content_hash(self.body)

    @property
    def embedding_text(self) -> str:
        return article_embedding_text(title=self.title, body=self.body)


def article_embedding_text(*, title: str, body: str) -> str:
    """The text an article's vector is computed from: the title leads, so it survives the
    model's truncation of long bodies."""
    return f"{title}\n\n{body}"


def _invalid(field: str, message: str) -> InvalidArticle:
    return InvalidArticle(f"{field}: {message}", details={"field": field})


def clean_title(title: object) -> str:
    if not isinstance(title, str) or not normalise_text(title):
        raise _invalid("title", "must be a non-blank string.")
    cleaned = normalise_text(title)
    if len(cleaned) > settings.KNOWLEDGE_TITLE_MAX_CHARS:
        raise _invalid("title", f"at most {settings.KNOWLEDGE_TITLE_MAX_CHARS} characters.")
    return cleaned


def clean_body(body: object) -> str:
    # The body is Markdown: its whitespace is meaningful and stored as given. Only the hash
    # normalises it.
    if not isinstance(body, str) or not body.strip():
        raise _invalid("body", "must be a non-blank string.")
    if len(body) > settings.KNOWLEDGE_BODY_MAX_CHARS:
        raise _invalid("body", f"at most {settings.KNOWLEDGE_BODY_MAX_CHARS} characters.")
    return body


def clean_choice(field: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise _invalid(field, f"must be one of {', '.join(choices)}.")
    return value


def _clean_tags(tags: Sequence[str]) -> list[str]:
    """Lowercased, whitespace-collapsed, de-duplicated (first occurrence kept).

    Alias tags (``alias:<phrase>``) are normalised the same way the search normalises a query,
    so ``alias:Dark  Mode`` matches the query "dark mode".
    """
    if isinstance(tags, str):
        raise _invalid("tags", "must be a list of strings.")
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise _invalid("tags", "must be a list of strings.")
        value = normalise_text(tag).lower()
        if value.startswith(ALIAS_TAG_PREFIX):
            value = ALIAS_TAG_PREFIX + normalise_phrase(value[len(ALIAS_TAG_PREFIX) :])
        if not value or value == ALIAS_TAG_PREFIX:
            continue
        if len(value) > TAG_MAX_LENGTH:
            raise _invalid("tags", f"each tag is at most {TAG_MAX_LENGTH} characters.")
        if value not in cleaned:
            cleaned.append(value)
    if len(cleaned) > settings.KNOWLEDGE_TAGS_MAX:
        raise _invalid("tags", f"at most {settings.KNOWLEDGE_TAGS_MAX} tags.")
    return cleaned


def clean_project_id(*, tenant: Tenant, project_id: uuid.UUID | str | None) -> uuid.UUID | None:
    """Writes validate the project (reads treat it as a partition key and do not)."""
    if project_id is None:
        return None
    try:
        parsed = project_id if isinstance(project_id, uuid.UUID) else uuid.UUID(str(project_id))
    except ValueError:
        parsed = None
    if parsed is None or not project_exists(tenant=tenant, project_id=parsed):
        raise InvalidProjectId(
            "project_id is not a project of this tenant.",
            details={"project_id": str(project_id)},
        )
    return parsed


def clean_owner(*, viewer: Viewer, visibility: str, owner_agent_id: str) -> str:
    """Agents always own what they write (they cannot file an article under another agent);
    curators may name an owner, and must for an owner-visible article."""
    if viewer.is_agent:
        return viewer.subject_id
    owner = (owner_agent_id or "").strip()
    if visibility == ArticleVisibility.OWNER and not owner:
        raise _invalid("owner_agent_id", "is required for an owner-visible article.")
    return owner


def clean_category(category: object) -> str:
    return clean_choice("category", category, ArticleCategory.values)


def clean_visibility(visibility: object) -> str:
    return clean_choice("visibility", visibility, ArticleVisibility.values)


def _clean_source(source: object) -> str:
    return clean_choice("source", source, ArticleSource.values)


def clean_status(status: object) -> str:
    return clean_choice("status", status, ArticleStatus.values)


def clean_tags_for(
    *, viewer: Viewer, tags: Sequence[str], existing: Sequence[str] = ()
) -> list[str]:
    """The cleaned tags, refused (403 ``alias_tag_reserved``) when they add an alias tag the
    viewer may not add."""
    cleaned = _clean_tags(tags)
    ensure_alias_tags_allowed(viewer=viewer, tags=cleaned, existing=existing)
    return cleaned


def ensure_alias_tags_allowed(
    *, viewer: Viewer, tags: Sequence[str], existing: Sequence[str] = ()
) -> None:
    """An ``alias:`` tag makes an article the curated answer for a phrase: only a curator may
    add one. An agent editing its own article may keep the aliases a curator gave it."""
    if viewer.can_curate:
        return
    added = sorted(
        tag for tag in tags if tag.startswith(ALIAS_TAG_PREFIX) and tag not in set(existing)
    )
    if added:
        raise AliasTagReserved(
            "Only user and orchestrator keys may add alias: tags.", details={"tags": added}
        )


def clean_article(
    *,
    tenant: Tenant,
    viewer: Viewer,
    title: object,
    body: object,
    category: object,
    tags: Sequence[str],
    project_id: uuid.UUID | str | None,
    visibility: object,
    owner_agent_id: str,
    source: object,
    source_memory_id: uuid.UUID | None,
    author_subject_id: str | None = None,
) -> CleanArticle:
    """The fields, checked; the author is the viewer's subject unless ``author_subject_id``
    names another (an import charges an article to the agent that owned it)."""
    # The order of the checks decides which error a body with several bad fields gets.
    cleaned_visibility = clean_visibility(visibility)
    cleaned_tags = clean_tags_for(viewer=viewer, tags=tags)
    return CleanArticle(
        title=clean_title(title),
        body=clean_body(body),
        category=clean_category(category),
        tags=cleaned_tags,
        project_id=clean_project_id(tenant=tenant, project_id=project_id),
        visibility=cleaned_visibility,
        owner_agent_id=clean_owner(
            viewer=viewer, visibility=cleaned_visibility, owner_agent_id=owner_agent_id
        ),
        source=_clean_source(source),
        source_memory_id=source_memory_id,
        author_subject_id=viewer.subject_id if author_subject_id is None else author_subject_id,
    )
