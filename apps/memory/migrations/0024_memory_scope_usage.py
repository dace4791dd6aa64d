"""Each subject's live-memory count, kept by triggers, so the quota check reads one row.

A write checks the quota with its subject's scope lock held. Counting the live rows meant
visiting every one of them: the cost of a write grew with the subject, to milliseconds at the
10,000-row default quota, and at a few hundred rows it was already a fifth of Postgres's time
per write (docs/benchmarks/load.md, "Latest").

``memory_scope_usage`` is derived data, like ``memory_search_term``: no model, no service
writes it. Triggers on ``memory_memory`` keep ``live`` equal to the number of the subject's
rows with no ``superseded_by``, on every path (ORM, bulk updates, the ``SET_NULL`` of a
deleted successor, raw SQL, truncation):

* INSERT: one statement-level upsert per statement (a batch write costs one);
* UPDATE that makes a row live or superseded, or changes its owner: that row's counts move;
* DELETE: the rows' subjects are counted down in the same statement;
* TRUNCATE: the counts are truncated too.

A subject whose count reaches zero loses its row, so an erased subject leaves no trace here.
A transaction that writes a subject's rows holds its counter row until it commits; every
writer already holds the subject's scope lock for that long, so nothing waits longer. A
tenant-wide erasure, which moves many subjects' counts, takes their rows before it locks any
memory row (``lock_tenant_memory_counts``), so that it waits for a write in flight rather than
deadlocking with one.

Existing rows are counted in this migration's transaction, with writes to ``memory_memory``
held back (SHARE mode) so that none is counted twice or missed.
"""

from django.db import migrations

FORWARD = """
SET LOCAL statement_timeout = 0;

CREATE TABLE memory_scope_usage (
    tenant_id uuid NOT NULL,
    subject_id varchar(200) NOT NULL,
    live integer NOT NULL,
    PRIMARY KEY (tenant_id, subject_id)
);

CREATE FUNCTION memory_scope_usage_add(p_tenant uuid, p_subject varchar, p_delta integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO memory_scope_usage AS usage (tenant_id, subject_id, live)
    VALUES (p_tenant, p_subject, p_delta)
    ON CONFLICT (tenant_id, subject_id) DO UPDATE SET live = usage.live + EXCLUDED.live;
    DELETE FROM memory_scope_usage
     WHERE tenant_id = p_tenant AND subject_id = p_subject AND live <= 0;
$$;

CREATE FUNCTION memory_scope_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_scope_usage AS usage (tenant_id, subject_id, live)
    SELECT tenant_id, subject_id, count(*)
      FROM inserted
     WHERE superseded_by_id IS NULL
     GROUP BY tenant_id, subject_id
     ORDER BY tenant_id, subject_id
    ON CONFLICT (tenant_id, subject_id) DO UPDATE SET live = usage.live + EXCLUDED.live;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_scope_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.superseded_by_id IS NULL THEN
        PERFORM memory_scope_usage_add(OLD.tenant_id, OLD.subject_id, -1);
    END IF;
    IF NEW.superseded_by_id IS NULL THEN
        PERFORM memory_scope_usage_add(NEW.tenant_id, NEW.subject_id, 1);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_scope_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_scope_usage_add(gone.tenant_id, gone.subject_id, -gone.live::integer)
       FROM (SELECT tenant_id, subject_id, count(*) AS live
               FROM deleted
              WHERE superseded_by_id IS NULL
              GROUP BY tenant_id, subject_id
              ORDER BY tenant_id, subject_id) AS gone;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_scope_usage_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE memory_scope_usage;
    RETURN NULL;
END
$$;

CREATE TRIGGER memory_scope_usage_after_insert AFTER INSERT ON memory_memory
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION memory_scope_usage_insert();
CREATE TRIGGER memory_scope_usage_after_update
    AFTER UPDATE OF superseded_by_id, tenant_id, subject_id ON memory_memory
    FOR EACH ROW WHEN (
        (OLD.superseded_by_id IS NULL) IS DISTINCT FROM (NEW.superseded_by_id IS NULL)
        OR (
            (OLD.tenant_id, OLD.subject_id) IS DISTINCT FROM (NEW.tenant_id, NEW.subject_id)
            AND NEW.superseded_by_id IS NULL
        )
    ) EXECUTE FUNCTION memory_scope_usage_update();
CREATE TRIGGER memory_scope_usage_after_delete AFTER DELETE ON memory_memory
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION memory_scope_usage_delete();
CREATE TRIGGER memory_scope_usage_after_truncate AFTER TRUNCATE ON memory_memory
    FOR EACH STATEMENT EXECUTE FUNCTION memory_scope_usage_truncate();

LOCK TABLE memory_memory IN SHARE MODE;
INSERT INTO memory_scope_usage (tenant_id, subject_id, live)
SELECT tenant_id, subject_id, count(*)
  FROM memory_memory
 WHERE superseded_by_id IS NULL
 GROUP BY tenant_id, subject_id;
"""

REVERSE = """
DROP TRIGGER IF EXISTS memory_scope_usage_after_truncate ON memory_memory;
DROP TRIGGER IF EXISTS memory_scope_usage_after_delete ON memory_memory;
DROP TRIGGER IF EXISTS memory_scope_usage_after_update ON memory_memory;
DROP TRIGGER IF EXISTS memory_scope_usage_after_insert ON memory_memory;
DROP FUNCTION IF EXISTS memory_scope_usage_truncate();
DROP FUNCTION IF EXISTS memory_scope_usage_delete();
DROP FUNCTION IF EXISTS memory_scope_usage_update();
DROP FUNCTION IF EXISTS memory_scope_usage_insert();
DROP FUNCTION IF EXISTS memory_scope_usage_add(uuid, varchar, integer);
DROP TABLE IF EXISTS memory_scope_usage;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0023_memory_fillfactor")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
