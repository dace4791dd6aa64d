"""Agent memory: the session tier (ordered turns with a TTL) and the long-term tier.

Every row is owned by ``(tenant, subject_id)``: the subject is derived from the API key
(apps.tenancy.scope.subject_id_for), never taken from a request.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Now
from pgvector.django import VectorField

from apps.tenancy.models import Tenant, TenantScopedModel

SESSION_CONTENT_MAX_BYTES = 100 * 1024
SUBJECT_ID_MAX_LENGTH = 200
SESSION_ID_MAX_LENGTH = 200
#: The regconfig of ``memory_memory.search_vector`` (migration 0009). Changing it means
#: regenerating the column, and keyword recall must parse queries with the same config.
MEMORY_TEXT_SEARCH_CONFIG = "english"


class SessionRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SYSTEM = "system", "System"
    FACT = "fact", "Fact"


class SessionMemory(TenantScopedModel):
    """One turn of an agent session. Append-only; read back in insertion order."""

    # The bigserial primary key doubles as the ordering tiebreak, so two turns appended in
    # the same microsecond still have one total order.
    seq = models.BigAutoField(primary_key=True)
    # Indexed as the first column of the scope index, not alone, as on Memory (below).
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH)
    session_id = models.CharField(max_length=SESSION_ID_MAX_LENGTH)
    role = models.CharField(max_length=16, choices=SessionRole.choices)
    content = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    expires_at = models.DateTimeField()
    # When the turn was said (a harness importing history sends the real time); defaults to
    # the time of the write. Promotion resolves relative dates ("yesterday") against it.
    occurred_at = models.DateTimeField(db_default=Now())

    class Meta:
        indexes = [
            models.Index(
                fields=["tenant", "subject_id", "session_id", "seq"],
                name="session_scope_seq_idx",
            ),
            models.Index(fields=["expires_at"], name="session_expires_at_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=SessionRole.values), name="session_role_valid"
            ),
        ]


class MemorySource(models.TextChoices):
    EXPLICIT = "explicit", "Explicit"
    PROMOTED = "promoted", "Promoted"


class SupersedeReason(models.TextChoices):
    """Why a memory replaced another (``Memory.supersede_reason`` of the replacing row)."""

    #: The writer named the row it replaces (``supersedes`` on a write).
    EXPLICIT = "explicit", "Explicit"
    #: Promotion wrote a paraphrase of a promoted row.
    PARAPHRASE = "paraphrase", "Paraphrase"
    #: The change detector saw a new value for the same attribute: ``changed_value:<attribute>``.
    CHANGED_VALUE = "changed_value", "Changed value"


class Memory(TenantScopedModel):
    """A durable fact an agent recalls by meaning. Superseded, never edited in place."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed as the first column of the scope indexes below, not alone. For a tenant newer
    # than the table's last ANALYZE the planner expects hardly any rows, and a bare tenant
    # index (the smallest) won: a read of one agent's rows read all of the tenant's agents'
    # rows instead (docs/benchmarks/load.md, "A new tenant's plans").
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH)
    text = models.TextField()
    # Optional retrieval context (neighbouring turns, a date, a title): keyword-indexed with
    # `text` (weight B in `search_vector`), never embedded, never returned as the memory.
    context = models.TextField(blank=True, default="", db_default="")
    # Retrieval context the service derives (services/derived_context.py): the memory's
    # neighbours in its session and the session's date, keyword-indexed at weight C. Empty when
    # the client gave `context`. Never embedded, never returned.
    derived_context = models.TextField(blank=True, default="", db_default="")
    # The session the memory's metadata names ("session:3"; "" = none) and its position in it,
    # per (tenant, subject, project): whose neighbour it is.
    context_thread = models.CharField(
        max_length=SESSION_ID_MAX_LENGTH, blank=True, default="", db_default=""
    )
    thread_seq = models.BigIntegerField(null=True, blank=True)
    # NULL until the embedding task fills it; until then only keyword recall finds the row.
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_content_hash = models.CharField(max_length=64)
    embedded_at = models.DateTimeField(null=True, blank=True)
    # The fingerprint of the model that made `embedding` (EmbeddingConfig.fingerprint), set
    # with every vector; "" for a row without one, or whose vector predates the column and was
    # not filled in (a writer of the previous release during a rolling upgrade). Recall
    # compares a query only with vectors of its own model; any other row counts as pending
    # until the background migration re-embeds it (docs/embeddings.md, "Which model made a
    # vector").
    embedding_model = models.CharField(max_length=16, blank=True, default="", db_default="")
    # Provider calls that failed on this row while it was pending. The drain claims rows that
    # never failed first, and embeds a row that did on its own, so one text the provider
    # refuses can hold up neither the rows written after it nor the rest of its batch.
    embedding_failures = models.PositiveSmallIntegerField(default=0, db_default=0)
    confidence = models.FloatField(default=1.0)
    source = models.CharField(
        max_length=16, choices=MemorySource.choices, default=MemorySource.EXPLICIT
    )
    source_session_id = models.CharField(max_length=SESSION_ID_MAX_LENGTH, blank=True, default="")
    # Promotion provenance: the seqs of the session turns the memory was compiled from and the
    # compiler that produced it ("heuristic", "openai/<model>", …). Empty for other sources.
    source_turn_seqs = ArrayField(models.BigIntegerField(), default=list, blank=True)
    compiler = models.CharField(max_length=200, blank=True, default="")
    # When the thing happened or was said: given by the writer, else the write time; for a
    # promoted memory, the turn's time or the date the compiler resolved ("yesterday").
    occurred_at = models.DateTimeField(db_default=Now())
    # Valid time, beside the transaction time (created_at): when the fact became true and when
    # it stopped being true (NULL while it is). `valid_from` defaults to `occurred_at` (the
    # writers set it; a BEFORE INSERT trigger fills it for any other insert, migration 0026).
    # A supersede ends the old row's validity where the new one's begins; `valid_to` equal to
    # `valid_from` is an empty interval: a correction, true at no time.
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)
    # On the row that replaced others: the rows it replaced and why (SupersedeReason, and for a
    # changed value the attribute: "changed_value:employer").
    supersedes = ArrayField(models.UUIDField(), default=list, blank=True, db_default=Value([]))
    supersede_reason = models.CharField(max_length=100, blank=True, default="", db_default="")
    # Live memories of the same subject that state another value for the same thing, where the
    # change detector would not decide which is current (services/changes.py). Symmetric.
    conflicts_with = ArrayField(models.UUIDField(), default=list, blank=True, db_default=Value([]))
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Partition key inside the subject's scope (NULL = global), not an isolation boundary.
    # This and the other relations between tenant-owned rows are constrained in the database by
    # a two-column key, (tenant_id, project_id) -> (tenant_id, id) (migration 0033), so a row
    # points only at its own tenant's rows and each key can be checked inside one tenant's
    # shard; Django cannot declare such a key, so it declares none (db_constraint=False).
    project = models.ForeignKey(
        "projects.Project",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    superseded_by = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    graduated_at = models.DateTimeField(null=True, blank=True)
    # The knowledge article this memory graduated into, and whether that first graduation was
    # to the tenant-wide (global) partition. A memory graduates at most once.
    graduated_article = models.ForeignKey(
        "knowledge.Article",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    graduated_global = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # One subject's rows, newest first: list, quota count, exact recall scan.
            models.Index(
                fields=["tenant", "subject_id", "created_at"], name="memory_scope_created_idx"
            ),
            # Trigram index for the scoped text fallback when embeddings are unavailable.
            GinIndex(OpClass("text", name="gin_trgm_ops"), name="memory_text_trgm_idx"),
            # A session's memories in order: the neighbours of a write, supersede or forget.
            models.Index(
                fields=["tenant", "subject_id", "context_thread", "thread_seq"],
                condition=~Q(context_thread=""),
                name="memory_thread_seq_idx",
            ),
            # The partial HNSW index `memories_live_embedding_hnsw_idx` (cosine, live rows) is
            # created in raw SQL by migration 0003: its spec name is longer than the 30
            # characters Django allows for a Meta index.
            # The stored generated column `search_vector` (text weight A, context weight B,
            # derived context weight C) and its GIN index `memory_search_vector_gin_idx` are
            # raw SQL too (migrations 0009/0010, 0014), so no ORM query ever loads the
            # tsvector; keyword recall reads it.
            # The GIN index on `tags` behind tag filters, `memory_tags_gin_idx`, is raw SQL
            # too (migration 0031), built concurrently like those.
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(source__in=MemorySource.values), name="memory_source_valid"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1),
                name="memory_confidence_range",
            ),
            models.CheckConstraint(condition=~Q(text=""), name="memory_text_not_empty"),
            # Added NOT VALID and validated apart (migration 0028), so no long lock.
            models.CheckConstraint(
                condition=Q(valid_to__isnull=True) | Q(valid_to__gte=F("valid_from")),
                name="memory_validity_ordered",
            ),
            # A promoted fact is stored once per subject: exact re-extractions dedupe here.
            models.UniqueConstraint(
                fields=["tenant", "subject_id", "embedding_content_hash"],
                condition=Q(source=MemorySource.PROMOTED),
                name="memory_promoted_content_hash_uniq",
            ),
        ]


class SessionPromotion(TenantScopedModel):
    """The promotion watermark: the content hash of a session when it was last compiled."""

    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH)
    session_id = models.CharField(max_length=SESSION_ID_MAX_LENGTH)
    content_hash = models.CharField(max_length=64)
    promoted_count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject_id", "session_id"], name="session_promotion_uniq"
            ),
        ]


class PromotionTrigger(models.TextChoices):
    EXPLICIT = "explicit", "Explicit"
    SWEEP = "sweep", "Sweep"


class PromotionJobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    SKIPPED = "skipped", "Skipped"
    FAILED = "failed", "Failed"
    DROPPED = "dropped", "Dropped"


#: Jobs that spent (or will spend) a compile, and so count against the hourly budget.
PROMOTION_BUDGET_STATUSES = (
    PromotionJobStatus.QUEUED,
    PromotionJobStatus.RUNNING,
    PromotionJobStatus.COMPLETED,
    PromotionJobStatus.FAILED,
)
PROMOTION_IN_FLIGHT_STATUSES = (PromotionJobStatus.QUEUED, PromotionJobStatus.RUNNING)


class PromotionJob(TenantScopedModel):
    """One reserved compile of one session. At most one is in flight per (tenant, subject,
    session), so an explicit trigger and the sweep cannot double-promote."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH)
    session_id = models.CharField(max_length=SESSION_ID_MAX_LENGTH)
    trigger = models.CharField(max_length=16, choices=PromotionTrigger.choices)
    status = models.CharField(
        max_length=16, choices=PromotionJobStatus.choices, default=PromotionJobStatus.QUEUED
    )
    outcome = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The lease: when the job was last put on the queue and last claimed by a worker, and how
    # many claims it has had. A queued or running job older than the lease was lost (message
    # gone, worker killed) and the reaper re-queues it, or fails it once attempts run out.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "created_at"], name="promotion_job_budget_idx"),
            models.Index(
                fields=["status", "claimed_at"],
                condition=Q(status__in=PROMOTION_IN_FLIGHT_STATUSES),
                name="promotion_job_in_flight_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject_id", "session_id"],
                condition=Q(status__in=PROMOTION_IN_FLIGHT_STATUSES),
                name="promotion_job_in_flight_uniq",
            ),
            models.CheckConstraint(
                condition=Q(status__in=PromotionJobStatus.values), name="promotion_job_status_valid"
            ),
        ]


class GraduationDeferral(TenantScopedModel):
    """A memory whose graduation by the sweep raised: not offered again before ``retry_at``.

    Without it the failing memory (hottest first) would head the sweep's queue every run.
    Removed when the memory graduates.
    """

    # Constrained by (tenant_id, memory_id) -> memory_memory (tenant_id, id), as on Memory.
    memory = models.OneToOneField(
        Memory, on_delete=models.CASCADE, primary_key=True, related_name="+", db_constraint=False
    )
    attempts = models.PositiveSmallIntegerField(default=1)
    retry_at = models.DateTimeField()
    reason = models.CharField(max_length=200)


class MemoryTombstone(TenantScopedModel):
    """The content fingerprint of a memory its subject forgot, and nothing else.

    Promotion and graduation consult it so a forgotten fact is not re-created from the session
    it came from; an explicit write of the same text removes it (the agent chose to know the
    fact again). It holds no text: ``content_hash`` is ``embedding_content_hash(text)``.
    """

    # Indexed as the first column of the unique constraint's index, not alone, as on Memory.
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", db_index=False)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH)
    content_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject_id", "content_hash"], name="memory_tombstone_uniq"
            ),
        ]


class EmbeddingWake(TenantScopedModel):
    """A drain of the tenant's pending embeddings is queued (or snoozed) until ``due_until``.

    Writes wake the drain after commit; while the marker is fresh a wake is a no-op, so a burst
    of writes enqueues one task, not one per write. The drain removes the marker before it
    claims rows, so a row committed after that claim wakes a new drain. A marker past
    ``due_until`` (its task lost, the broker down when it was sent) no longer holds wakes back.
    """

    tenant = models.OneToOneField(
        Tenant, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    due_until = models.DateTimeField()
