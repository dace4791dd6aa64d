"""The small, realistic corpus the knowledge thresholds are measured on (texts only).

Used by ``manage.py knowledge_gate_calibrate`` (which prints the figures quoted in
docs/knowledge.md) and by the tests, so the documented numbers and the tested behaviour come
from the same texts. Nothing here is read at request time.
"""

from __future__ import annotations

from typing import NamedTuple


class CorpusArticle(NamedTuple):
    title: str
    body: str
    category: str
    tags: tuple[str, ...]


class TextPair(NamedTuple):
    label: str
    first: str
    second: str


CORPUS: tuple[CorpusArticle, ...] = (
    CorpusArticle(
        "Database migrations run before the web deploy",
        "Schema migrations are applied by a one-off release job before any web container of "
        "the new version starts. Migrations must be backwards compatible with the previous "
        "release: add columns as nullable, backfill in a task, and only drop a column two "
        "releases after the code stopped reading it.",
        "pattern",
        ("deploy", "postgres", "migrations"),
    ),
    CorpusArticle(
        "Friday deploy freeze",
        "We do not deploy to production after 14:00 UTC on Fridays. Hotfixes for incidents "
        "are the only exception, and they need a second reviewer on call. The freeze exists "
        "because weekend on-call coverage is thin.",
        "decision",
        ("deploy", "process", "alias:deploy freeze"),
    ),
    CorpusArticle(
        "Postgres connection pooling with PgBouncer",
        "All services connect through PgBouncer in transaction pooling mode. Session-level "
        "features such as advisory locks held across transactions, prepared statements and "
        "SET without LOCAL do not survive transaction pooling, so use transaction-scoped "
        "advisory locks and SET LOCAL instead.",
        "reference",
        ("postgres", "pgbouncer", "infrastructure"),
    ),
    CorpusArticle(
        "Retry policy for outbound HTTP calls",
        "Outbound HTTP calls retry at most three times with exponential backoff and full "
        "jitter, starting at 200 ms. Only idempotent requests and 429/502/503/504 responses "
        "are retried; a 4xx other than 429 is a bug in the request and is never retried.",
        "pattern",
        ("http", "resilience", "retries"),
    ),
    CorpusArticle(
        "Celery tasks must be idempotent",
        "Celery runs with acks_late, so a worker crash redelivers the task. Every task must "
        "be safe to run twice: take ids rather than objects, re-read state from the database, "
        "and guard writes with a conditional update or a unique constraint.",
        "pattern",
        ("celery", "tasks", "idempotency"),
    ),
    CorpusArticle(
        "Feature flags live in the settings service",
        "Feature flags are read from the settings service with a 30 second local cache. "
        "A flag is removed within two sprints of reaching 100% rollout; stale flags are "
        "listed every Monday in the engineering channel.",
        "decision",
        ("feature-flags", "process"),
    ),
    CorpusArticle(
        "Slow test suite caused by factory cascades",
        "The API test suite went from four to eleven minutes because SubFactory chains "
        "created a tenant, a project and three users for every comment. Passing existing "
        "parents into factories and using build() for pure unit tests brought it back to "
        "five minutes.",
        "finding",
        ("testing", "performance", "factories"),
    ),
    CorpusArticle(
        "Timezones are stored in UTC",
        "Every timestamp is stored as timestamptz in UTC and converted to the user's zone "
        "only at the edge, in the client. Naive datetimes are rejected by the linter (ruff "
        "DTZ rules). Reports use the tenant's configured reporting timezone.",
        "decision",
        ("time", "postgres", "conventions"),
    ),
    CorpusArticle(
        "Redis is a cache, never a source of truth",
        "Anything stored only in Redis may vanish on failover or eviction. Rate-limit "
        "counters, session history and computed caches are fine; anything a user would "
        "miss after a restart belongs in Postgres.",
        "decision",
        ("redis", "architecture"),
    ),
    CorpusArticle(
        "On-call escalation path",
        "Pages go to the primary on-call engineer first. After 15 minutes without an "
        "acknowledgement the secondary is paged, and after 30 minutes the engineering "
        "manager. Incidents with customer impact open a status page entry within 20 minutes.",
        "reference",
        ("on-call", "incidents", "process"),
    ),
    CorpusArticle(
        "Memory leak in the PDF renderer",
        "Worker memory grew by about 40 MB per rendered invoice until the OOM killer "
        "restarted the pod. The cause was a font cache created per render. Rendering now "
        "reuses one font cache per process and workers recycle after 500 tasks.",
        "finding",
        ("pdf", "memory", "workers"),
    ),
    CorpusArticle(
        "API pagination uses limit and offset",
        "List endpoints accept limit (default 50, maximum 200) and offset, and return "
        "total_count in meta. Cursor pagination is reserved for the event feed, where rows "
        "are appended while clients page.",
        "decision",
        ("api", "conventions"),
    ),
    CorpusArticle(
        "Secrets are injected from the vault at startup",
        "Application secrets are never committed or baked into images. The entrypoint "
        "fetches them from the vault using the pod's service account and exports them as "
        "environment variables; rotating a secret means restarting the deployment.",
        "pattern",
        ("security", "secrets", "deploy"),
    ),
    CorpusArticle(
        "Search relevance regression after stemming change",
        "Switching the full-text configuration from simple to english improved recall for "
        "plural queries but broke exact matches on product codes like AB-1200, which the "
        "stemmer split. Product codes are now indexed in a separate simple-config column.",
        "finding",
        ("search", "postgres", "full-text"),
    ),
    CorpusArticle(
        "Code review requires one approval",
        "Every pull request needs one approving review from someone other than the author. "
        "Changes to migrations, authentication or billing need a second approval from the "
        "owning team. Reviews should land within one working day.",
        "decision",
        ("process", "code-review"),
    ),
    CorpusArticle(
        "Image uploads are resized asynchronously",
        "Uploads are stored as-is in object storage and a task produces the thumbnail and "
        "web sizes. The API returns immediately with the original URL; clients poll the "
        "image resource until variants are ready.",
        "pattern",
        ("uploads", "storage", "tasks"),
    ),
    CorpusArticle(
        "Rate limits per API key",
        "Each API key may make 600 requests per minute; bursts above that get 429 with a "
        "Retry-After header. Internal service keys are exempt. Limits are counted in Redis "
        "with a fixed window.",
        "reference",
        ("api", "rate-limits", "redis"),
    ),
    CorpusArticle(
        "Frontend bundle size budget",
        "The main JavaScript bundle must stay under 250 KB gzipped. CI fails a pull request "
        "that grows it by more than 5 KB without a label explaining why. Large libraries are "
        "loaded lazily on the routes that need them.",
        "decision",
        ("frontend", "performance", "ci"),
    ),
    CorpusArticle(
        "Logging: structured JSON with request ids",
        "Services log one JSON object per line with level, message, request_id and "
        "tenant_id. Never log request bodies, tokens or personal data; log identifiers "
        "instead and look the record up when debugging.",
        "pattern",
        ("logging", "observability", "security"),
    ),
    CorpusArticle(
        "Customer data export takes a day for large tenants",
        "Exports for tenants with more than a million rows took up to 26 hours because the "
        "exporter paged with OFFSET. Keyset pagination on (created_at, id) cut the largest "
        "export to 40 minutes.",
        "finding",
        ("exports", "postgres", "performance"),
    ),
)

#: The same article with a light edit (a typo fixed, a clause added, whitespace): the gate
#: should treat these as the article it already has.
LIGHT_EDIT_PAIRS: tuple[TextPair, ...] = (
    TextPair(
        "typo fixed",
        "Friday deploy freeze\n\nWe do not deploy to prodcution after 14:00 UTC on Fridays. "
        "Hotfixes for incidents are the only exception.",
        "Friday deploy freeze\n\nWe do not deploy to production after 14:00 UTC on Fridays. "
        "Hotfixes for incidents are the only exception.",
    ),
    TextPair(
        "clause added",
        "Celery tasks must be idempotent\n\nCelery runs with acks_late, so a worker crash "
        "redelivers the task. Every task must be safe to run twice.",
        "Celery tasks must be idempotent\n\nCelery runs with acks_late, so a worker crash "
        "redelivers the task. Every task must be safe to run twice, even concurrently.",
    ),
    TextPair(
        "title reworded",
        "Timezones are stored in UTC\n\nEvery timestamp is stored as timestamptz in UTC and "
        "converted to the user's zone only at the edge, in the client.",
        "Timestamps are stored in UTC\n\nEvery timestamp is stored as timestamptz in UTC and "
        "converted to the user's zone only at the edge, in the client.",
    ),
    TextPair(
        "sentence reordered",
        "Rate limits per API key\n\nEach API key may make 600 requests per minute. Internal "
        "service keys are exempt.",
        "Rate limits per API key\n\nInternal service keys are exempt. Each API key may make "
        "600 requests per minute.",
    ),
    TextPair(
        "markdown formatting",
        "Logging: structured JSON with request ids\n\nServices log one JSON object per line "
        "with level, message, request_id and tenant_id.",
        "Logging: structured JSON with request ids\n\n- Services log **one JSON object per "
        "line**\n- with `level`, `message`, `request_id` and `tenant_id`.",
    ),
)

#: The same fact said twice in different words: the gate should call these duplicates.
PARAPHRASE_PAIRS: tuple[TextPair, ...] = (
    TextPair(
        "deploy freeze",
        "No production deploys on Friday afternoons\n\nWe do not deploy to production after "
        "14:00 UTC on Fridays, except hotfixes for incidents.",
        "Friday afternoon deployment freeze\n\nProduction deployments stop at 2pm UTC every "
        "Friday; only incident hotfixes may go out after that.",
    ),
    TextPair(
        "utc storage",
        "Store timestamps in UTC\n\nAll timestamps are saved in UTC and converted to local "
        "time only in the client.",
        "Timestamps are kept in UTC\n\nWe persist every timestamp in UTC and only convert to "
        "the user's local timezone on the client side.",
    ),
    TextPair(
        "idempotent tasks",
        "Background tasks must be idempotent\n\nA task can be delivered twice after a worker "
        "crash, so running it twice must be safe.",
        "Make Celery tasks safe to run twice\n\nBecause tasks may be redelivered when a "
        "worker dies, every task has to tolerate being executed more than once.",
    ),
    TextPair(
        "redis not source of truth",
        "Redis is only a cache\n\nNothing important may live only in Redis, because it can "
        "lose data on failover.",
        "Do not treat Redis as durable storage\n\nData kept solely in Redis can disappear "
        "after a failover, so durable state belongs in Postgres.",
    ),
    TextPair(
        "one approval",
        "Pull requests need one approval\n\nEvery pull request must be approved by one "
        "reviewer who is not the author before merging.",
        "One reviewer approval before merge\n\nA PR can only be merged after someone other "
        "than its author has approved it.",
    ),
    TextPair(
        "retry backoff",
        "Retry HTTP calls with exponential backoff\n\nOutbound requests are retried up to "
        "three times with exponential backoff and jitter.",
        "Exponential backoff for outbound HTTP retries\n\nWe retry external HTTP requests "
        "at most three times, backing off exponentially with random jitter.",
    ),
    TextPair(
        "secrets vault",
        "Secrets come from the vault\n\nSecrets are loaded from the vault when the container "
        "starts and are never committed to the repository.",
        "Load secrets from vault at startup\n\nContainers fetch their secrets from the vault "
        "on boot; secrets must never be checked into git.",
    ),
    TextPair(
        "structured logs",
        "Log structured JSON\n\nEvery service writes one JSON object per log line including "
        "the request id.",
        "Use JSON structured logging\n\nServices emit logs as single-line JSON objects that "
        "carry the request id.",
    ),
)

#: Same topic, different or conflicting fact: a curator should look (gated_to_draft), not
#: a silent dedupe.
NEAR_PAIRS: tuple[TextPair, ...] = (
    TextPair(
        "deploy freeze changed",
        "Friday deploy freeze\n\nWe do not deploy to production after 14:00 UTC on Fridays.",
        "Thursday deploy freeze\n\nFrom March we stop production deploys at 16:00 UTC on "
        "Thursdays as well as Fridays.",
    ),
    TextPair(
        "approvals changed",
        "Code review requires one approval\n\nEvery pull request needs one approving review.",
        "Code review now requires two approvals\n\nEvery pull request needs two approving "
        "reviews from the owning team.",
    ),
    TextPair(
        "rate limit changed",
        "Rate limits per API key\n\nEach API key may make 600 requests per minute.",
        "Rate limits raised per API key\n\nEach API key may now make 1200 requests per "
        "minute, counted over a sliding window.",
    ),
    TextPair(
        "pagination style",
        "API pagination uses limit and offset\n\nList endpoints accept limit and offset.",
        "API pagination uses cursors\n\nList endpoints page with an opaque cursor instead of "
        "offsets.",
    ),
    TextPair(
        "bundle budget",
        "Frontend bundle size budget\n\nThe main bundle must stay under 250 KB gzipped.",
        "Frontend bundle budget tightened\n\nThe main JavaScript bundle must now stay under "
        "180 KB gzipped.",
    ),
    TextPair(
        "pooling mode",
        "PgBouncer transaction pooling\n\nServices connect through PgBouncer in transaction "
        "pooling mode.",
        "PgBouncer session pooling for the reporting service\n\nThe reporting service "
        "connects through PgBouncer in session pooling mode because it uses prepared "
        "statements.",
    ),
)

#: Different facts on unrelated topics.
UNRELATED_PAIRS: tuple[TextPair, ...] = (
    TextPair(
        "deploy vs pdf",
        "Friday deploy freeze\n\nWe do not deploy to production after 14:00 UTC on Fridays.",
        "Memory leak in the PDF renderer\n\nWorker memory grew by about 40 MB per invoice.",
    ),
    TextPair(
        "utc vs bundle",
        "Timezones are stored in UTC\n\nEvery timestamp is stored in UTC.",
        "Frontend bundle size budget\n\nThe main bundle must stay under 250 KB gzipped.",
    ),
    TextPair(
        "redis vs review",
        "Redis is a cache\n\nAnything stored only in Redis may vanish on failover.",
        "Code review requires one approval\n\nEvery pull request needs one approving review.",
    ),
    TextPair(
        "oncall vs uploads",
        "On-call escalation path\n\nPages go to the primary on-call engineer first.",
        "Image uploads are resized asynchronously\n\nA task produces the thumbnail sizes.",
    ),
    TextPair(
        "flags vs export",
        "Feature flags live in the settings service\n\nFlags are cached for 30 seconds.",
        "Customer data export takes a day\n\nExports paged with OFFSET took 26 hours.",
    ),
    TextPair(
        "logging vs migrations",
        "Logging: structured JSON\n\nServices log one JSON object per line.",
        "Database migrations run before the web deploy\n\nA release job applies migrations.",
    ),
    TextPair(
        "search vs retries",
        "Search relevance regression\n\nThe english stemmer split product codes.",
        "Retry policy for outbound HTTP calls\n\nRetry at most three times with backoff.",
    ),
    TextPair(
        "secrets vs factories",
        "Secrets are injected from the vault\n\nThe entrypoint fetches secrets at startup.",
        "Slow test suite caused by factory cascades\n\nSubFactory chains slowed the tests.",
    ),
)

#: Questions the corpus answers, with the title of the article that answers each.
RELEVANT_QUERIES: tuple[tuple[str, str], ...] = (
    (
        "when do database migrations run during a release",
        "Database migrations run before the web deploy",
    ),
    ("can I deploy to production on friday afternoon", "Friday deploy freeze"),
    ("why do advisory locks break behind pgbouncer", "Postgres connection pooling with PgBouncer"),
    (
        "how many times should we retry a failing http request",
        "Retry policy for outbound HTTP calls",
    ),
    ("what happens if a celery worker crashes mid task", "Celery tasks must be idempotent"),
    ("why did the test suite get so slow", "Slow test suite caused by factory cascades"),
    ("which timezone do we store timestamps in", "Timezones are stored in UTC"),
    ("who gets paged when the primary does not acknowledge", "On-call escalation path"),
    ("pdf worker keeps running out of memory", "Memory leak in the PDF renderer"),
    (
        "how do I get database passwords into the container",
        "Secrets are injected from the vault at startup",
    ),
    ("how many approvals does a pull request need", "Code review requires one approval"),
    ("what is the request limit per api key", "Rate limits per API key"),
    ("how large may the javascript bundle be", "Frontend bundle size budget"),
    ("large tenant export is very slow", "Customer data export takes a day for large tenants"),
)

#: Identifier-style look-ups (codes, setting names, jargon) with the article holding each:
#: where exact words matter more than meaning.
IDENTIFIER_QUERIES: tuple[tuple[str, str], ...] = (
    ("AB-1200", "Search relevance regression after stemming change"),
    ("acks_late", "Celery tasks must be idempotent"),
    ("ruff DTZ", "Timezones are stored in UTC"),
    ("timestamptz", "Timezones are stored in UTC"),
    ("Retry-After", "Rate limits per API key"),
    ("SubFactory", "Slow test suite caused by factory cascades"),
    ("SET LOCAL", "Postgres connection pooling with PgBouncer"),
    ("OOM killer", "Memory leak in the PDF renderer"),
    ("250 KB gzipped", "Frontend bundle size budget"),
    ("keyset pagination", "Customer data export takes a day for large tenants"),
)

#: Queries the corpus has nothing on: nearest neighbours still come back, ranked and scored.
JUNK_QUERIES: tuple[str, ...] = (
    "best sourdough starter hydration ratio",
    "how tall is the eiffel tower",
    "recommended tire pressure for a road bike",
    "lyrics of a famous opera aria",
    "how to knit a scarf for beginners",
    "migration patterns of arctic terns",
    "what is the capital of mongolia",
    "symptoms of a vitamin d deficiency",
    "rules of cricket for americans",
    "how to repot an orchid",
    "cheap flights to lisbon in may",
    "chess opening for black against e4",
)
