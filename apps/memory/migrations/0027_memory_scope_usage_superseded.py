"""Each subject's superseded memories are counted beside its live ones, so the history quota
(``MEMORY_QUOTA_SUPERSEDED_ROWS``) reads the same one row as the live quota.

Superseded rows were never counted: an agent correcting one fact in a loop kept every
version, without bound. ``memory_scope_usage`` (migration 0024) gains ``superseded``, the
number of the subject's rows with a ``superseded_by``, and its triggers keep both columns on
every path:

* INSERT: one statement-level upsert per statement, live and superseded rows counted apart (a
  restore inserts history too);
* UPDATE that supersedes a row, makes one live again (the ``SET_NULL`` of a deleted
  successor), or moves it to another owner: one upsert when the owner stays, else one each;
* DELETE and TRUNCATE as before.

A subject loses its row once it has neither live nor superseded rows. Every count is taken
again in this migration's transaction, with writes to ``memory_memory`` held back (SHARE
mode) from before the triggers change, so none is counted twice or missed.
"""

from django.db import migrations

FORWARD = """
SET LOCAL statement_timeout = 0;
LOCK TABLE memory_memory IN SHARE MODE;

ALTER TABLE memory_scope_usage ADD COLUMN superseded integer NOT NULL DEFAULT 0;

CREATE FUNCTION memory_scope_usage_move(
    p_tenant uuid, p_subject varchar, p_live integer, p_superseded integer
) RETURNS void LANGUAGE sql AS $$
    INSERT INTO memory_scope_usage AS usage (tenant_id, subject_id, live, superseded)
    VALUES (p_tenant, p_subject, p_live, p_superseded)
    ON CONFLICT (tenant_id, subject_id) DO UPDATE
        SET live = usage.live + EXCLUDED.live,
            superseded = usage.superseded + EXCLUDED.superseded;
    DELETE FROM memory_scope_usage
     WHERE tenant_id = p_tenant AND subject_id = p_subject AND live <= 0 AND superseded <= 0;
$$;

CREATE OR REPLACE FUNCTION memory_scope_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_scope_usage AS usage (tenant_id, subject_id, live, superseded)
    SELECT tenant_id, subject_id,
           count(*) FILTER (WHERE superseded_by_id IS NULL),
           count(*) FILTER (WHERE superseded_by_id IS NOT NULL)
      FROM inserted
     GROUP BY tenant_id, subject_id
     ORDER BY tenant_id, subject_id
    ON CONFLICT (tenant_id, subject_id) DO UPDATE
        SET live = usage.live + EXCLUDED.live,
            superseded = usage.superseded + EXCLUDED.superseded;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION memory_scope_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_live integer := CASE WHEN OLD.superseded_by_id IS NULL THEN 1 ELSE 0 END;
    new_live integer := CASE WHEN NEW.superseded_by_id IS NULL THEN 1 ELSE 0 END;
BEGIN
    IF (OLD.tenant_id, OLD.subject_id) = (NEW.tenant_id, NEW.subject_id) THEN
        PERFORM memory_scope_usage_move(
            NEW.tenant_id, NEW.subject_id, new_live - old_live, old_live - new_live);
    ELSE
        PERFORM memory_scope_usage_move(OLD.tenant_id, OLD.subject_id, -old_live, old_live - 1);
        PERFORM memory_scope_usage_move(NEW.tenant_id, NEW.subject_id, new_live, 1 - new_live);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION memory_scope_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_scope_usage_move(
                gone.tenant_id, gone.subject_id, -gone.live::integer, -gone.superseded::integer)
       FROM (SELECT tenant_id, subject_id,
                    count(*) FILTER (WHERE superseded_by_id IS NULL) AS live,
                    count(*) FILTER (WHERE superseded_by_id IS NOT NULL) AS superseded
               FROM deleted
              GROUP BY tenant_id, subject_id
              ORDER BY tenant_id, subject_id) AS gone;
    RETURN NULL;
END
$$;

DROP TRIGGER memory_scope_usage_after_update ON memory_memory;
CREATE TRIGGER memory_scope_usage_after_update
    AFTER UPDATE OF superseded_by_id, tenant_id, subject_id ON memory_memory
    FOR EACH ROW WHEN (
        (OLD.superseded_by_id IS NULL) IS DISTINCT FROM (NEW.superseded_by_id IS NULL)
        OR (OLD.tenant_id, OLD.subject_id) IS DISTINCT FROM (NEW.tenant_id, NEW.subject_id)
    ) EXECUTE FUNCTION memory_scope_usage_update();
DROP FUNCTION memory_scope_usage_add(uuid, varchar, integer);

TRUNCATE memory_scope_usage;
INSERT INTO memory_scope_usage (tenant_id, subject_id, live, superseded)
SELECT tenant_id, subject_id,
       count(*) FILTER (WHERE superseded_by_id IS NULL),
       count(*) FILTER (WHERE superseded_by_id IS NOT NULL)
  FROM memory_memory
 GROUP BY tenant_id, subject_id;
"""

# Back to migration 0024's triggers and live counts only.
REVERSE = """
LOCK TABLE memory_memory IN SHARE MODE;

CREATE FUNCTION memory_scope_usage_add(p_tenant uuid, p_subject varchar, p_delta integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO memory_scope_usage AS usage (tenant_id, subject_id, live)
    VALUES (p_tenant, p_subject, p_delta)
    ON CONFLICT (tenant_id, subject_id) DO UPDATE SET live = usage.live + EXCLUDED.live;
    DELETE FROM memory_scope_usage
     WHERE tenant_id = p_tenant AND subject_id = p_subject AND live <= 0;
$$;

CREATE OR REPLACE FUNCTION memory_scope_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION memory_scope_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION memory_scope_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER memory_scope_usage_after_update ON memory_memory;
CREATE TRIGGER memory_scope_usage_after_update
    AFTER UPDATE OF superseded_by_id, tenant_id, subject_id ON memory_memory
    FOR EACH ROW WHEN (
        (OLD.superseded_by_id IS NULL) IS DISTINCT FROM (NEW.superseded_by_id IS NULL)
        OR (
            (OLD.tenant_id, OLD.subject_id) IS DISTINCT FROM (NEW.tenant_id, NEW.subject_id)
            AND NEW.superseded_by_id IS NULL
        )
    ) EXECUTE FUNCTION memory_scope_usage_update();
DROP FUNCTION memory_scope_usage_move(uuid, varchar, integer, integer);

DELETE FROM memory_scope_usage WHERE live <= 0;
ALTER TABLE memory_scope_usage DROP COLUMN superseded;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0026_session_scope_usage")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
