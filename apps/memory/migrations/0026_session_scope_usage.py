"""Each subject's stored session turns and their bytes, kept by triggers, so the session quota
reads one row.

Session turns were unbounded: an agent at its write rate could store gigabytes an hour. The
quota (``SESSION_QUOTA_TURNS``, ``SESSION_QUOTA_BYTES``) is checked with the subject's session
lock held (``lock_session_scope``), like the live-memory quota (migration 0024), and like it
reads a count kept by triggers rather than visiting the subject's turns.

``session_scope_usage`` is derived data: no model, no service writes it. Triggers on
``memory_sessionmemory`` keep ``turns`` equal to the number of the subject's stored turns
(expired ones too, until the prune deletes them) and ``bytes`` to the sum of their sizes, a
turn's size being the UTF-8 bytes of its content plus those of its metadata as JSON text, on
every path (the ORM, the prune, erasure, raw SQL, truncation):

* INSERT: one statement-level upsert per statement (a batch costs one);
* UPDATE of a turn's content, metadata or owner: that turn's figures move;
* DELETE: the turns' subjects are counted down in the same statement;
* TRUNCATE: the counts are truncated too.

A subject left with no turns loses its row. Existing turns are counted in this migration's
transaction, with writes to the turns held back (SHARE mode) so none is counted twice or missed.
"""

from django.db import migrations

FORWARD = """
SET LOCAL statement_timeout = 0;

CREATE TABLE session_scope_usage (
    tenant_id uuid NOT NULL,
    subject_id varchar(200) NOT NULL,
    turns bigint NOT NULL,
    bytes bigint NOT NULL,
    PRIMARY KEY (tenant_id, subject_id)
);

CREATE FUNCTION session_turn_bytes(p_content text, p_metadata jsonb)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT octet_length(p_content)::bigint + octet_length(p_metadata::text)::bigint
$$;

CREATE FUNCTION session_scope_usage_add(
    p_tenant uuid, p_subject varchar, p_turns bigint, p_bytes bigint
) RETURNS void LANGUAGE sql AS $$
    INSERT INTO session_scope_usage AS usage (tenant_id, subject_id, turns, bytes)
    VALUES (p_tenant, p_subject, p_turns, p_bytes)
    ON CONFLICT (tenant_id, subject_id)
    DO UPDATE SET turns = usage.turns + EXCLUDED.turns, bytes = usage.bytes + EXCLUDED.bytes;
    DELETE FROM session_scope_usage
     WHERE tenant_id = p_tenant AND subject_id = p_subject AND turns <= 0;
$$;

CREATE FUNCTION session_scope_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO session_scope_usage AS usage (tenant_id, subject_id, turns, bytes)
    SELECT tenant_id, subject_id, count(*), sum(session_turn_bytes(content, metadata))
      FROM inserted
     GROUP BY tenant_id, subject_id
     ORDER BY tenant_id, subject_id
    ON CONFLICT (tenant_id, subject_id)
    DO UPDATE SET turns = usage.turns + EXCLUDED.turns, bytes = usage.bytes + EXCLUDED.bytes;
    RETURN NULL;
END
$$;

CREATE FUNCTION session_scope_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM session_scope_usage_add(
        OLD.tenant_id, OLD.subject_id, -1, -session_turn_bytes(OLD.content, OLD.metadata));
    PERFORM session_scope_usage_add(
        NEW.tenant_id, NEW.subject_id, 1, session_turn_bytes(NEW.content, NEW.metadata));
    RETURN NULL;
END
$$;

CREATE FUNCTION session_scope_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM session_scope_usage_add(gone.tenant_id, gone.subject_id, -gone.turns, -gone.bytes)
       FROM (SELECT tenant_id, subject_id, count(*) AS turns,
                    sum(session_turn_bytes(content, metadata))::bigint AS bytes
               FROM deleted
              GROUP BY tenant_id, subject_id
              ORDER BY tenant_id, subject_id) AS gone;
    RETURN NULL;
END
$$;

CREATE FUNCTION session_scope_usage_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE session_scope_usage;
    RETURN NULL;
END
$$;

CREATE TRIGGER session_scope_usage_after_insert AFTER INSERT ON memory_sessionmemory
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION session_scope_usage_insert();
CREATE TRIGGER session_scope_usage_after_update
    AFTER UPDATE OF content, metadata, tenant_id, subject_id ON memory_sessionmemory
    FOR EACH ROW WHEN (
        (OLD.tenant_id, OLD.subject_id) IS DISTINCT FROM (NEW.tenant_id, NEW.subject_id)
        OR session_turn_bytes(OLD.content, OLD.metadata)
           IS DISTINCT FROM session_turn_bytes(NEW.content, NEW.metadata)
    ) EXECUTE FUNCTION session_scope_usage_update();
CREATE TRIGGER session_scope_usage_after_delete AFTER DELETE ON memory_sessionmemory
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION session_scope_usage_delete();
CREATE TRIGGER session_scope_usage_after_truncate AFTER TRUNCATE ON memory_sessionmemory
    FOR EACH STATEMENT EXECUTE FUNCTION session_scope_usage_truncate();

LOCK TABLE memory_sessionmemory IN SHARE MODE;
INSERT INTO session_scope_usage (tenant_id, subject_id, turns, bytes)
SELECT tenant_id, subject_id, count(*), sum(session_turn_bytes(content, metadata))
  FROM memory_sessionmemory
 GROUP BY tenant_id, subject_id;
"""

REVERSE = """
DROP TRIGGER IF EXISTS session_scope_usage_after_truncate ON memory_sessionmemory;
DROP TRIGGER IF EXISTS session_scope_usage_after_delete ON memory_sessionmemory;
DROP TRIGGER IF EXISTS session_scope_usage_after_update ON memory_sessionmemory;
DROP TRIGGER IF EXISTS session_scope_usage_after_insert ON memory_sessionmemory;
DROP FUNCTION IF EXISTS session_scope_usage_truncate();
DROP FUNCTION IF EXISTS session_scope_usage_delete();
DROP FUNCTION IF EXISTS session_scope_usage_update();
DROP FUNCTION IF EXISTS session_scope_usage_insert();
DROP FUNCTION IF EXISTS session_scope_usage_add(uuid, varchar, bigint, bigint);
DROP FUNCTION IF EXISTS session_turn_bytes(text, jsonb);
DROP TABLE IF EXISTS session_scope_usage;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0025_models_moved_to_dataops")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
