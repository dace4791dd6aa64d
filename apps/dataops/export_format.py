# length: the export format, each record type with its encoder and decoder, read as one spec.
"""The ``memory_export`` / ``memory_import`` file: JSON Lines, one record per line.

Pure encoding and decoding; reading a tenant out is ``selectors.transfer``, writing it in is
``services.transfer`` (both in this app). Line 1 is the header, then one record per line, each
with a ``type``::

    {"type": "header", "format": "engram-export", "format_version": 1, "tenant": "acme", ...}
    {"type": "article", "id": ..., "title": ..., "embedding": "<base64>", ...}
    {"type": "article_link", "from_article_id": ..., "to_article_id": ..., "kind": ...}
    {"type": "memory", "id": ..., "subject_id": ..., "text": ..., "superseded_by": ..., ...}
    {"type": "session_turn", "seq": 17, "subject_id": ..., "session_id": ..., "role": ...}
    {"type": "session_promotion", "subject_id": ..., "session_id": ..., "content_hash": ...}

An export reproduces a tenant exactly, so unlike ``knowledge_export`` it keeps ids,
timestamps and vectors. Vectors are base64 of the little-endian float32 values pgvector
stores, so they survive bit for bit. Articles reuse the knowledge app's portable
:class:`ArticleRecord` fields and add their stored state (``apps.knowledge.transfer``).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError as DjangoValidationError

from apps.dataops.exceptions import ExportFileInvalid
from apps.knowledge.transfer import (
    ARTICLE_STATE_FIELDS,
    ArticleSnapshot,
    ArticleState,
    LinkSnapshot,
    RecordError,
    record_from_mapping,
)
from apps.memory.models import (
    Memory,
    MemorySource,
    SessionMemory,
    SessionPromotion,
    SupersedeReason,
)
from apps.providers.embeddings import MODEL_FINGERPRINT_LENGTH

FORMAT = "engram-export"
FORMAT_VERSION = 1
VECTOR_ENCODING = "base64-float32-le"
_VECTOR_DTYPE = np.dtype("<f4")


class RecordType(StrEnum):
    HEADER = "header"
    ARTICLE = "article"
    ARTICLE_LINK = "article_link"
    MEMORY = "memory"
    SESSION_TURN = "session_turn"
    SESSION_PROMOTION = "session_promotion"


#: Record types in the order an export writes them (and an import inserts them).
RECORD_TYPES = (
    RecordType.ARTICLE,
    RecordType.ARTICLE_LINK,
    RecordType.MEMORY,
    RecordType.SESSION_TURN,
    RecordType.SESSION_PROMOTION,
)


class _FieldError(ValueError):
    pass


# ----------------------------------------------------------------------------- vectors


def encode_vector(vector: Any) -> str | None:
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype=_VECTOR_DTYPE).tobytes()).decode("ascii")


def decode_vector(value: object, *, dimensions: int) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _FieldError("embedding must be a base64 string or null")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _FieldError("embedding is not valid base64") from exc
    if len(raw) != dimensions * _VECTOR_DTYPE.itemsize:
        raise _FieldError(
            f"embedding has {len(raw) // _VECTOR_DTYPE.itemsize} dimensions, "
            f"the header says {dimensions}"
        )
    values: list[float] = np.frombuffer(raw, dtype=_VECTOR_DTYPE).astype(np.float64).tolist()
    return values


# ----------------------------------------------------------------------------- encoding


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _id(value: object) -> str | None:
    return str(value) if value is not None else None


@dataclass(frozen=True)
class ExportHeader:
    tenant: str
    tenant_id: str
    embedding_dimensions: int
    exported_at: str
    subject: str | None
    includes_knowledge: bool
    #: Every project of the tenant, id → slug, so an import elsewhere can map by slug.
    projects: dict[str, str]
    #: Records of each type that follow; an import refuses a file that holds fewer.
    counts: dict[str, int]
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    vector_encoding: str = VECTOR_ENCODING

    def to_mapping(self) -> dict[str, Any]:
        return {"type": RecordType.HEADER.value, **asdict(self)}


def memory_to_mapping(memory: Memory) -> dict[str, Any]:
    return {
        "type": RecordType.MEMORY.value,
        "id": str(memory.pk),
        "subject_id": memory.subject_id,
        "text": memory.text,
        "context": memory.context,
        "tags": list(memory.tags),
        "metadata": memory.metadata,
        "confidence": memory.confidence,
        "source": memory.source,
        "source_session_id": memory.source_session_id,
        "source_turn_seqs": list(memory.source_turn_seqs),
        "compiler": memory.compiler,
        "occurred_at": _iso(memory.occurred_at),
        "valid_from": _iso(memory.valid_from),
        "valid_to": _iso(memory.valid_to),
        "project_id": _id(memory.project_id),
        "superseded_by": _id(memory.superseded_by_id),
        "superseded_at": _iso(memory.superseded_at),
        "supersedes": [str(pk) for pk in memory.supersedes],
        "supersede_reason": memory.supersede_reason,
        "conflicts_with": [str(pk) for pk in memory.conflicts_with],
        "recall_count": memory.recall_count,
        "last_recalled_at": _iso(memory.last_recalled_at),
        "graduated_at": _iso(memory.graduated_at),
        "graduated_article": _id(memory.graduated_article_id),
        "graduated_global": memory.graduated_global,
        "embedding": encode_vector(memory.embedding),
        "embedding_content_hash": memory.embedding_content_hash,
        "embedded_at": _iso(memory.embedded_at),
        "embedding_model": memory.embedding_model,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
    }


def turn_to_mapping(turn: SessionMemory) -> dict[str, Any]:
    return {
        "type": RecordType.SESSION_TURN.value,
        # Informational: an import assigns new seq values, in this order.
        "seq": turn.seq,
        "subject_id": turn.subject_id,
        "session_id": turn.session_id,
        "role": turn.role,
        "content": turn.content,
        "metadata": turn.metadata,
        "expires_at": _iso(turn.expires_at),
        "occurred_at": _iso(turn.occurred_at),
        "created_at": _iso(turn.created_at),
        "updated_at": _iso(turn.updated_at),
    }


def watermark_to_mapping(watermark: SessionPromotion) -> dict[str, Any]:
    return {
        "type": RecordType.SESSION_PROMOTION.value,
        "subject_id": watermark.subject_id,
        "session_id": watermark.session_id,
        "content_hash": watermark.content_hash,
        "promoted_count": watermark.promoted_count,
        "created_at": _iso(watermark.created_at),
        "updated_at": _iso(watermark.updated_at),
    }


def article_to_mapping(snapshot: ArticleSnapshot) -> dict[str, Any]:
    record = asdict(snapshot.record)
    record.pop("links")
    state = snapshot.state
    return {
        "type": RecordType.ARTICLE.value,
        **record,
        "project_id": _id(state.project_id),
        "embedding": encode_vector(state.embedding),
        "embedding_content_hash": state.embedding_content_hash,
        "embedded_at": _iso(state.embedded_at),
        "embedding_model": state.embedding_model,
        "version": state.version,
        "published_at": _iso(state.published_at),
        "updated_at": _iso(state.updated_at),
    }


def link_to_mapping(link: LinkSnapshot) -> dict[str, Any]:
    return {
        "type": RecordType.ARTICLE_LINK.value,
        "from_article_id": str(link.from_article_id),
        "to_article_id": str(link.to_article_id),
        "kind": link.kind,
        "created_at": _iso(link.created_at),
        "updated_at": _iso(link.updated_at),
    }


def to_json_line(mapping: Mapping[str, Any]) -> str:
    return json.dumps(mapping, ensure_ascii=False, sort_keys=True)


# ----------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class ParsedMemory:
    line: int
    memory: Memory  # unsaved, no tenant; FK ids as exported
    #: Written before memories carried valid time (no ``valid_to`` field): derived on import.
    legacy_validity: bool = False


@dataclass(frozen=True)
class ParsedTurn:
    line: int
    seq: int
    turn: SessionMemory  # unsaved, no tenant, no seq


@dataclass(frozen=True)
class ParsedWatermark:
    line: int
    watermark: SessionPromotion  # unsaved, no tenant


@dataclass(frozen=True)
class ParsedArticle:
    line: int
    snapshot: ArticleSnapshot


@dataclass(frozen=True)
class ParsedLink:
    line: int
    link: LinkSnapshot


@dataclass
class ParsedExport:
    header: ExportHeader
    articles: list[ParsedArticle] = field(default_factory=list)
    links: list[ParsedLink] = field(default_factory=list)
    memories: list[ParsedMemory] = field(default_factory=list)
    turns: list[ParsedTurn] = field(default_factory=list)
    watermarks: list[ParsedWatermark] = field(default_factory=list)

    def count(self, record_type: str) -> int:
        records: dict[RecordType, list[Any]] = {
            RecordType.ARTICLE: self.articles,
            RecordType.ARTICLE_LINK: self.links,
            RecordType.MEMORY: self.memories,
            RecordType.SESSION_TURN: self.turns,
            RecordType.SESSION_PROMOTION: self.watermarks,
        }
        return len(records[RecordType(record_type)])

    @property
    def total(self) -> int:
        return sum(self.count(record_type) for record_type in RECORD_TYPES)


class _Fields:
    """Typed access to one record's fields; every failure names the field."""

    def __init__(self, data: dict[str, Any], *, allowed: Iterable[str]) -> None:
        unknown = set(data) - set(allowed) - {"type"}
        if unknown:
            raise _FieldError(f"unknown fields: {', '.join(sorted(unknown))}")
        self.data = data

    def raw(self, name: str) -> Any:
        if name not in self.data:
            raise _FieldError(f"missing field {name!r}")
        return self.data[name]

    def string(self, name: str) -> str:
        value = self.raw(name)
        if not isinstance(value, str):
            raise _FieldError(f"{name} must be a string")
        return value

    def integer(self, name: str) -> int:
        value = self.raw(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _FieldError(f"{name} must be a non-negative integer")
        return value

    def number(self, name: str) -> float:
        value = self.raw(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _FieldError(f"{name} must be a number")
        return float(value)

    def boolean(self, name: str) -> bool:
        value = self.raw(name)
        if not isinstance(value, bool):
            raise _FieldError(f"{name} must be true or false")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.raw(name)
        if not isinstance(value, dict):
            raise _FieldError(f"{name} must be an object")
        return value

    def strings(self, name: str) -> list[str]:
        value = self.raw(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise _FieldError(f"{name} must be a list of strings")
        return value

    def integers(self, name: str) -> list[int]:
        value = self.raw(name)
        if not isinstance(value, list) or not all(
            isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in value
        ):
            raise _FieldError(f"{name} must be a list of non-negative integers")
        return value

    def identifier(self, name: str) -> uuid.UUID:
        value = self.raw(name)
        try:
            return uuid.UUID(str(value))
        except ValueError as exc:
            raise _FieldError(f"{name} must be a UUID") from exc

    def identifiers(self, name: str) -> list[uuid.UUID]:
        value = self.raw(name)
        if not isinstance(value, list):
            raise _FieldError(f"{name} must be a list of UUIDs")
        try:
            return [uuid.UUID(str(item)) for item in value]
        except ValueError as exc:
            raise _FieldError(f"{name} must be a list of UUIDs") from exc

    def optional_uuid(self, name: str) -> uuid.UUID | None:
        return None if self.raw(name) is None else self.identifier(name)

    def timestamp(self, name: str) -> datetime:
        value = self.raw(name)
        try:
            parsed = datetime.fromisoformat(str(value))
        except ValueError as exc:
            raise _FieldError(f"{name} must be an ISO 8601 timestamp") from exc
        if parsed.tzinfo is None:
            raise _FieldError(f"{name} must carry a UTC offset")
        return parsed

    def optional_timestamp(self, name: str) -> datetime | None:
        return None if self.raw(name) is None else self.timestamp(name)


# Fields the model checks itself (max_length, choices, blank); relations are the service's.
_CLEAN_EXCLUDE = ["tenant", "project", "superseded_by", "graduated_article", "embedding"]


def _clean(instance: Memory | SessionMemory | SessionPromotion) -> None:
    try:
        instance.full_clean(
            exclude=_CLEAN_EXCLUDE, validate_unique=False, validate_constraints=False
        )
    except DjangoValidationError as exc:
        problems = "; ".join(
            f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items()
        )
        raise _FieldError(problems) from exc


def _parse_header(data: dict[str, Any]) -> ExportHeader:
    fields = _Fields(data, allowed=ExportHeader.__dataclass_fields__)
    if data.get("format") != FORMAT:
        raise _FieldError(f"not an Engram export (format must be {FORMAT!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise _FieldError(
            f"format_version {data.get('format_version')!r} is not supported "
            f"(this Engram reads version {FORMAT_VERSION})"
        )
    if data.get("vector_encoding") != VECTOR_ENCODING:
        raise _FieldError(f"vector_encoding must be {VECTOR_ENCODING!r}")
    projects = fields.mapping("projects")
    counts = fields.mapping("counts")
    if set(counts) != {str(t) for t in RECORD_TYPES} or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values()
    ):
        raise _FieldError("counts must give a non-negative integer for every record type")
    subject = data.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise _FieldError("subject must be a string or null")
    dimensions = fields.integer("embedding_dimensions")
    if dimensions < 1:
        raise _FieldError("embedding_dimensions must be positive")
    return ExportHeader(
        tenant=fields.string("tenant"),
        tenant_id=str(fields.identifier("tenant_id")),
        embedding_dimensions=dimensions,
        exported_at=fields.timestamp("exported_at").isoformat(),
        subject=subject,
        includes_knowledge=fields.boolean("includes_knowledge"),
        projects={str(uuid.UUID(str(key))): str(slug) for key, slug in projects.items()},
        counts={str(key): int(value) for key, value in counts.items()},
    )


_MEMORY_FIELDS = [
    "id",
    "subject_id",
    "text",
    "context",
    "tags",
    "metadata",
    "confidence",
    "source",
    "source_session_id",
    "source_turn_seqs",
    "compiler",
    "occurred_at",
    "valid_from",
    "valid_to",
    "project_id",
    "superseded_by",
    "superseded_at",
    "supersedes",
    "supersede_reason",
    "conflicts_with",
    "recall_count",
    "last_recalled_at",
    "graduated_at",
    "graduated_article",
    "graduated_global",
    "embedding",
    "embedding_content_hash",
    "embedded_at",
    "embedding_model",
    "created_at",
    "updated_at",
]


def _embedding_model(fields: _Fields, present: bool) -> str:
    """The fingerprint of the model that made a record's vector. Optional: files written
    before vectors carried it have none, and such a vector counts as another model's (recall
    skips it, the background migration re-embeds it)."""
    if not present:
        return ""
    value = fields.string("embedding_model")
    if len(value) > MODEL_FINGERPRINT_LENGTH:
        raise _FieldError(f"embedding_model is at most {MODEL_FINGERPRINT_LENGTH} characters")
    return value


def _parse_memory(data: dict[str, Any], *, dimensions: int) -> Memory:
    fields = _Fields(data, allowed=_MEMORY_FIELDS)
    confidence = fields.number("confidence")
    if not 0.0 <= confidence <= 1.0:
        raise _FieldError("confidence must be within [0, 1]")
    occurred_at = (
        fields.timestamp("occurred_at") if "occurred_at" in data else fields.timestamp("created_at")
    )
    memory = Memory(
        id=fields.identifier("id"),
        subject_id=fields.string("subject_id"),
        text=fields.string("text"),
        # Optional: files written before memories carried retrieval context have none.
        context=fields.string("context") if "context" in data else "",
        tags=fields.strings("tags"),
        metadata=fields.raw("metadata"),
        confidence=confidence,
        source=fields.string("source"),
        source_session_id=fields.string("source_session_id"),
        # Optional: files written before provenance and event time have none; such a memory
        # happened when it was written.
        source_turn_seqs=fields.integers("source_turn_seqs") if "source_turn_seqs" in data else [],
        compiler=fields.string("compiler") if "compiler" in data else "",
        occurred_at=occurred_at,
        # Optional: files written before memories carried valid time have none. Such a fact
        # became true when it happened; where it was superseded, its end is derived from its
        # successor (derive_validity).
        valid_from=fields.timestamp("valid_from") if "valid_from" in data else occurred_at,
        valid_to=fields.optional_timestamp("valid_to") if "valid_to" in data else None,
        project_id=fields.optional_uuid("project_id"),
        superseded_by_id=fields.optional_uuid("superseded_by"),
        superseded_at=fields.optional_timestamp("superseded_at"),
        supersedes=fields.identifiers("supersedes") if "supersedes" in data else [],
        supersede_reason=fields.string("supersede_reason") if "supersede_reason" in data else "",
        conflicts_with=fields.identifiers("conflicts_with") if "conflicts_with" in data else [],
        recall_count=fields.integer("recall_count"),
        last_recalled_at=fields.optional_timestamp("last_recalled_at"),
        graduated_at=fields.optional_timestamp("graduated_at"),
        graduated_article_id=fields.optional_uuid("graduated_article"),
        graduated_global=fields.boolean("graduated_global"),
        embedding=decode_vector(fields.raw("embedding"), dimensions=dimensions),
        embedding_content_hash=fields.string("embedding_content_hash"),
        embedded_at=fields.optional_timestamp("embedded_at"),
        embedding_model=_embedding_model(fields, "embedding_model" in data),
        created_at=fields.timestamp("created_at"),
        updated_at=fields.timestamp("updated_at"),
    )
    if memory.embedding is None:
        memory.embedding_model = ""
    if memory.valid_to is not None and memory.valid_to < memory.valid_from:
        raise _FieldError("valid_to must not be before valid_from")
    _clean(memory)
    return memory


_TURN_FIELDS = [
    "seq",
    "subject_id",
    "session_id",
    "role",
    "content",
    "metadata",
    "expires_at",
    "occurred_at",
    "created_at",
    "updated_at",
]


def _parse_turn(data: dict[str, Any]) -> tuple[int, SessionMemory]:
    fields = _Fields(data, allowed=_TURN_FIELDS)
    turn = SessionMemory(
        subject_id=fields.string("subject_id"),
        session_id=fields.string("session_id"),
        role=fields.string("role"),
        content=fields.string("content"),
        metadata=fields.raw("metadata"),
        expires_at=fields.timestamp("expires_at"),
        occurred_at=fields.timestamp("occurred_at")
        if "occurred_at" in data
        else fields.timestamp("created_at"),
        created_at=fields.timestamp("created_at"),
        updated_at=fields.timestamp("updated_at"),
    )
    _clean(turn)
    return fields.integer("seq"), turn


_WATERMARK_FIELDS = [
    "subject_id",
    "session_id",
    "content_hash",
    "promoted_count",
    "created_at",
    "updated_at",
]


def _parse_watermark(data: dict[str, Any]) -> SessionPromotion:
    fields = _Fields(data, allowed=_WATERMARK_FIELDS)
    watermark = SessionPromotion(
        subject_id=fields.string("subject_id"),
        session_id=fields.string("session_id"),
        content_hash=fields.string("content_hash"),
        promoted_count=fields.integer("promoted_count"),
        created_at=fields.timestamp("created_at"),
        updated_at=fields.timestamp("updated_at"),
    )
    _clean(watermark)
    return watermark


def _parse_article(data: dict[str, Any], *, dimensions: int) -> ArticleSnapshot:
    state_data = {name: data[name] for name in ARTICLE_STATE_FIELDS if name in data}
    record_data = {k: v for k, v in data.items() if k not in state_data and k != "type"}
    try:
        record = record_from_mapping(record_data)
    except RecordError as exc:
        raise _FieldError(str(exc)) from exc
    fields = _Fields(state_data, allowed=ARTICLE_STATE_FIELDS)
    for name in ("id", "created_at"):
        if not getattr(record, name):
            raise _FieldError(f"missing field {name!r}")
    try:
        uuid.UUID(str(record.id))
        created = datetime.fromisoformat(str(record.created_at))
    except ValueError as exc:
        raise _FieldError("id must be a UUID and created_at an ISO 8601 timestamp") from exc
    if created.tzinfo is None:
        raise _FieldError("created_at must carry a UTC offset")
    version = fields.integer("version")
    if version < 1:
        raise _FieldError("version must be at least 1")
    return ArticleSnapshot(
        record=record,
        state=ArticleState(
            project_id=fields.optional_uuid("project_id"),
            embedding=decode_vector(fields.raw("embedding"), dimensions=dimensions),
            embedding_content_hash=fields.string("embedding_content_hash"),
            embedded_at=fields.optional_timestamp("embedded_at"),
            version=version,
            published_at=fields.optional_timestamp("published_at"),
            updated_at=fields.timestamp("updated_at"),
            embedding_model=_embedding_model(fields, "embedding_model" in state_data),
        ),
    )


def _parse_link(data: dict[str, Any]) -> LinkSnapshot:
    fields = _Fields(
        data, allowed=("from_article_id", "to_article_id", "kind", "created_at", "updated_at")
    )
    return LinkSnapshot(
        from_article_id=fields.identifier("from_article_id"),
        to_article_id=fields.identifier("to_article_id"),
        kind=fields.string("kind"),
        created_at=fields.timestamp("created_at"),
        updated_at=fields.timestamp("updated_at"),
    )


def parse_export(
    lines: Iterable[str], *, on_line: Callable[[int], None] | None = None
) -> ParsedExport:
    """Decode a whole file, or raise :class:`ExportFileInvalid` naming the first bad line.

    Blank lines are skipped (but counted). The header must come first, and the file must
    hold as many records of each type as the header promises (a truncated file is refused).
    """
    parsed: ParsedExport | None = None
    number = 0
    for number, raw in enumerate(lines, start=1):
        if on_line is not None:
            on_line(number)
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ExportFileInvalid(number, f"invalid JSON ({exc.msg})") from exc
        if not isinstance(data, dict):
            raise ExportFileInvalid(number, "a record must be a JSON object")
        kind = data.get("type")
        try:
            if parsed is None:
                if kind != RecordType.HEADER:
                    raise _FieldError("the first record must be the header")
                parsed = ParsedExport(header=_parse_header(data))
                continue
            dimensions = parsed.header.embedding_dimensions
            if kind == RecordType.MEMORY:
                parsed.memories.append(
                    ParsedMemory(
                        number,
                        _parse_memory(data, dimensions=dimensions),
                        legacy_validity="valid_to" not in data,
                    )
                )
            elif kind == RecordType.SESSION_TURN:
                seq, turn = _parse_turn(data)
                parsed.turns.append(ParsedTurn(number, seq, turn))
            elif kind == RecordType.SESSION_PROMOTION:
                parsed.watermarks.append(ParsedWatermark(number, _parse_watermark(data)))
            elif kind == RecordType.ARTICLE:
                parsed.articles.append(
                    ParsedArticle(number, _parse_article(data, dimensions=dimensions))
                )
            elif kind == RecordType.ARTICLE_LINK:
                parsed.links.append(ParsedLink(number, _parse_link(data)))
            elif kind == RecordType.HEADER:
                raise _FieldError("a second header")
            else:
                raise _FieldError(f"unknown record type {kind!r}")
        except _FieldError as exc:
            label = kind if kind in RecordType.__members__.values() else "record"
            raise ExportFileInvalid(number, f"{label}: {exc}") from exc
    if parsed is None:
        raise ExportFileInvalid(max(number, 1), "the file holds no header")
    _derive_validity(parsed.memories)
    for record_type in RECORD_TYPES:
        promised, found = parsed.header.counts[record_type], parsed.count(record_type)
        if promised != found:
            raise ExportFileInvalid(
                number,
                f"the header promises {promised} {record_type} record(s), the file holds "
                f"{found} (truncated or edited?)",
            )
    return parsed


def _derive_validity(memories: list[ParsedMemory]) -> None:
    """Valid time for records of files written before memories carried it: a superseded
    memory's validity ends where its successor's begins (the successor in the file; else when
    it was superseded), never before its own start, and a successor of such a file records
    what it replaced, as migration 0027 did for the rows already stored."""
    by_id = {parsed.memory.pk: parsed for parsed in memories}
    for parsed in memories:
        memory = parsed.memory
        if not parsed.legacy_validity or memory.superseded_by_id is None:
            continue
        successor = by_id.get(memory.superseded_by_id)
        if successor is not None:
            end = successor.memory.valid_from
        else:
            end = memory.superseded_at or memory.valid_from
        memory.valid_to = max(end, memory.valid_from)
        if successor is not None and successor.legacy_validity:
            following = successor.memory
            if memory.pk not in following.supersedes:
                following.supersedes = sorted([*following.supersedes, memory.pk], key=str)
            following.supersede_reason = (
                SupersedeReason.PARAPHRASE
                if following.source == MemorySource.PROMOTED
                else SupersedeReason.EXPLICIT
            )
