"""Recall of the caller's memories (POST /api/v1/memory/recall)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import (
    CheckedDictField,
    CheckedInputSerializer,
    LimitField,
    ProjectIdField,
    QueryTextField,
    TimestampField,
)
from apps.core.api.serializers import COMMON_ERRORS, TimeWindowSerializer, render_many
from apps.core.db.filters import FILTER_HELP, record_filter_parse
from apps.memory.apis.common import MemoryOutputSerializer
from apps.memory.selectors import (
    EMBEDDING_STATUSES,
    RECALL_MODES,
    RECALL_SELECTION_REASONS,
    VALIDITIES,
    memory_recall,
    validate_recall_query,
)
from apps.memory.services import memory_recall_record
from apps.tenancy.api_base import ReadByMeaningApi


class MemoryRecallInputSerializer(CheckedInputSerializer):
    # Checked by the selector's own validator, so every surface shares one contract: a
    # blank, null or non-string query is `invalid_query`, a long one `query_too_long`.
    query = QueryTextField(check=validate_recall_query, max_chars=settings.MEMORY_QUERY_MAX_CHARS)
    project_id = ProjectIdField()
    limit = LimitField(
        default=settings.MEMORY_RECALL_DEFAULT_LIMIT, max_value=settings.MEMORY_RECALL_MAX_LIMIT
    )
    include_superseded = serializers.BooleanField(required=False, default=False)
    # Default: MEMORY_RECALL_DEFAULT_MODE (hybrid). docs/memory.md, "Recall modes".
    mode = serializers.ChoiceField(choices=RECALL_MODES, required=False)
    as_of = TimestampField(
        required=False,
        help_text="ISO 8601: recall the memories that held at this time (valid time), "
        "superseded since or not, ranked as usual. `include_superseded` does not apply.",
    )
    # Checked by the selector's own parser (422 `invalid_filter`), shared with list and MCP.
    filter = CheckedDictField(
        check=record_filter_parse, required=False, allow_null=True, help_text=FILTER_HELP
    )


SCORE_HELP = (
    "The ranking's own score, comparable only within one response: in `hybrid` (the default) "
    "a fused reciprocal rank normalised so 1.0 = first in both legs (a rank, not a "
    "relevance: do not threshold on it); in `semantic` the cosine similarity; in `keyword` "
    "the BM25 score; null on the fallback path."
)
VALIDITY_HELP = (
    "Whether the memory still holds: `current`; `superseded` (a newer memory replaced it: "
    "`memory.superseded_by`, and its fact ended at `memory.valid_to`; returned with "
    "`include_superseded`, `as_of`, or for a question about what used to be); `contested` "
    "(another live memory states a different value and Engram would not decide which holds: "
    "`memory.conflicts_with`). Without "
    "`as_of`, what still holds is listed first, and of two contested memories the later fact "
    "first (unless that would put a promoted memory above an explicit one)."
)
SIMILARITY_HELP = (
    "Cosine similarity of the memory's vector to the query's, in every mode that embedded the "
    "query (semantic, hybrid), whichever leg found the memory: stable across corpora, the "
    "value to threshold on. Null in `keyword` mode, on the fallback path and for a memory "
    "that has no vector yet."
)


class RecallHitOutputSerializer(serializers.Serializer[dict[str, Any]]):
    memory = MemoryOutputSerializer()
    score = serializers.FloatField(allow_null=True, help_text=SCORE_HELP)
    similarity = serializers.FloatField(allow_null=True, help_text=SIMILARITY_HELP)
    selection_reason = serializers.ChoiceField(
        choices=RECALL_SELECTION_REASONS,
        help_text="Which ranking picked the memory. `keyword_pending`: found by its words while "
        "its embedding is still pending (no vector ranked it yet).",
    )
    embedding_status = serializers.ChoiceField(
        choices=EMBEDDING_STATUSES,
        help_text="`pending` until the memory's embedding lands: only keyword recall can find "
        "it until then (read-your-writes).",
    )
    validity = serializers.ChoiceField(
        choices=VALIDITIES,
        help_text=VALIDITY_HELP,
    )


TIME_WINDOW_HELP = (
    'The time the question\'s words name ("last spring", "in May 2023", "two weeks ago"; '
    "relative to `as_of`, else now), or null: the memories valid or occurring in it, "
    "superseded since or not, ranked first; nothing else is filtered (docs/memory.md, "
    '"Time words in a question").'
)


class MemoryRecallMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    fallback = serializers.BooleanField()
    reason = serializers.CharField(allow_null=True)
    underfilled = serializers.BooleanField()
    strategy = serializers.CharField()
    ann_iterative_scan = serializers.CharField(
        required=False,
        help_text="`off` (exact scan), `applied` (HNSW with pgvector's iterative scan) or "
        "`unavailable` (HNSW without it: the server's pgvector lacks it); vector reads only.",
    )
    ann_iterative_scan_reason = serializers.CharField(
        required=False, help_text="Why the iterative scan was `unavailable`; only then."
    )
    mode = serializers.ChoiceField(choices=RECALL_MODES)
    degraded_reason = serializers.CharField(
        allow_null=True,
        help_text="Why the primary answered instead of the heavy-read replica (`replica_lag`, "
        "`replica_unavailable`); null when the replica served it or none is configured.",
    )
    pending_searched = serializers.IntegerField(
        help_text="How many rows in scope were searched by their words only because their "
        "embedding is still pending (0 in semantic mode, which cannot rank them)."
    )
    as_of = TimestampField(allow_null=True, help_text="The `as_of` the recall ran at, or null.")
    time_window = TimeWindowSerializer(allow_null=True, help_text=TIME_WINDOW_HELP)


class MemoryRecallOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = RecallHitOutputSerializer(many=True)
    meta = MemoryRecallMetaSerializer()


class MemoryRecallApi(ReadByMeaningApi):
    @extend_schema(
        operation_id="memory_recall",
        request=MemoryRecallInputSerializer,
        responses={200: MemoryRecallOutputSerializer, **COMMON_ERRORS},
        tags=["memory"],
    )
    def post(self, request: Request) -> Response:
        """Recall the caller's memories by meaning and words (global ∪ `project_id`).

        `mode`: `semantic` (vector ranking), `keyword` (BM25 over text and context) or
        `hybrid` (both, fused by weighted reciprocal rank; the default). `score` is the
        mode's ranking score (in `hybrid` a fused rank, not a relevance); `similarity` is the
        cosine to the query whenever the query was embedded. `meta.fallback` is
        true (with a stable `meta.reason`, and `score: null`) when embeddings are unavailable
        and the keyword ranking answered instead; an empty scope on the healthy path is `[]`
        with `fallback: false`. `meta.strategy` says how the vector leg ran (exact | ann |
        ann+exact), or keyword | fallback; each result's `selection_reason` says which
        ranking picked it (semantic | keyword | keyword+semantic | keyword_fallback |
        ilike_fallback | keyword_pending).

        `filter` narrows by tags and metadata inside the scope every mode ranks, so every
        memory it keeps can rank (docs/recall.md, "Filters").

        Read-your-writes: a memory is found by keyword (and hybrid) recall as soon as its
        write returns, before its embedding lands (with `embed_now` on the write, semantic
        recall finds it at once too); such a hit says `embedding_status:
        pending` (and `keyword_pending` outside a fallback), and `meta.pending_searched`
        counts the pending rows that were searched.
        """
        payload = MemoryRecallInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = payload.validated_data
        result = memory_recall(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            query=args["query"],
            project_id=args.get("project_id"),
            limit=args["limit"],
            include_superseded=args["include_superseded"],
            mode=args.get("mode"),
            as_of=args.get("as_of"),
            narrowing=args.get("filter"),
        )
        memory_recall_record(result=result)
        memories = render_many(MemoryOutputSerializer, [hit.memory for hit in result.results])
        data = [
            {
                "memory": memory,
                "score": hit.score,
                "similarity": None if hit.similarity is None else round(hit.similarity, 6),
                "selection_reason": hit.selection_reason,
                "embedding_status": hit.embedding_status,
                "validity": hit.validity,
            }
            for memory, hit in zip(memories, result.results, strict=True)
        ]
        return Response({"data": data, "meta": result.meta})
