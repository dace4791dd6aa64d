"""The keyword leg's postings: one row per (memory, lexeme) of ``memory_memory.search_vector``.

Keyword recall ranks a subject's rows by BM25. Read from the tsvector, that means taking every
row that shares a word with the question (on a conversation, where a speaker's name is in
every turn, every row), copying its document and testing each query word against it. Read
from postings, it is one index range scan per
query word over rows that already hold the word's occurrences in the text (weight A) and the
contexts (B, C), and the document's length (distinct lexemes): the same BM25, exactly, at a
fraction of the cost (docs/memory.md, "Keyword latency").

``memory_search_term`` is derived data, like the GIN index: no model, no service writes it.
Triggers on ``memory_memory`` keep it equal to the rows' ``search_vector`` on every path
(ORM, raw SQL, bulk updates, truncation), so it can never disagree with what it indexes:

* INSERT: one statement-level insert of every new row's terms (a batch write costs one);
* UPDATE that changes a row's ``search_vector`` (its derived context, a supersede clearing
  it) or owner: that row's terms are replaced;
* DELETE (forget, erasure, tenant removal): the rows' terms go in the same statement;
* TRUNCATE: the postings are truncated too.

Existing rows are indexed here, in one statement, inside the migration's transaction (3,854
LoCoMo turns: 212k postings, ~5 s; so minutes at a million memories), and writes to
``memory_memory`` wait for it.
"""

from django.db import migrations

FORWARD = """
SET LOCAL statement_timeout = 0;

CREATE TABLE memory_search_term (
    memory_id uuid NOT NULL,
    tenant_id uuid NOT NULL,
    subject_id varchar(200) NOT NULL,
    lexeme text COLLATE "C" NOT NULL,
    in_text smallint NOT NULL,
    in_context smallint NOT NULL,
    length integer NOT NULL
);

-- What a recall reads: one subject's postings of one word, with everything BM25 needs.
CREATE INDEX memory_search_term_lookup_idx ON memory_search_term
    (tenant_id, subject_id, lexeme) INCLUDE (memory_id, in_text, in_context, length);
-- What the triggers delete by.
CREATE INDEX memory_search_term_memory_idx ON memory_search_term (memory_id);

-- A document's postings: each lexeme's occurrences in the text (weight A) and in the
-- contexts (B: the client's, C: the service's), and the document's distinct lexemes.
CREATE FUNCTION memory_search_term_rows(document tsvector)
RETURNS TABLE (lexeme text, in_text smallint, in_context smallint, length integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT term.lexeme,
           cardinality(array_positions(term.weights, 'A'))::smallint,
           (cardinality(term.weights) - cardinality(array_positions(term.weights, 'A')))::smallint,
           length(document)
      FROM unnest(document) AS term
$$;

CREATE FUNCTION memory_search_term_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_search_term
    SELECT inserted.id, inserted.tenant_id, inserted.subject_id, term.*
      FROM inserted CROSS JOIN LATERAL memory_search_term_rows(inserted.search_vector) AS term;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_search_term_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_search_term WHERE memory_id = OLD.id;
    INSERT INTO memory_search_term
    SELECT NEW.id, NEW.tenant_id, NEW.subject_id, term.*
      FROM memory_search_term_rows(NEW.search_vector) AS term;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_search_term_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_search_term WHERE memory_id IN (SELECT id FROM deleted);
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_search_term_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE memory_search_term;
    RETURN NULL;
END
$$;

CREATE TRIGGER memory_search_term_after_insert AFTER INSERT ON memory_memory
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION memory_search_term_insert();
CREATE TRIGGER memory_search_term_after_update
    AFTER UPDATE OF text, context, derived_context, tenant_id, subject_id ON memory_memory
    FOR EACH ROW WHEN (
        OLD.search_vector IS DISTINCT FROM NEW.search_vector
        OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
        OR OLD.subject_id IS DISTINCT FROM NEW.subject_id
    ) EXECUTE FUNCTION memory_search_term_update();
CREATE TRIGGER memory_search_term_after_delete AFTER DELETE ON memory_memory
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION memory_search_term_delete();
CREATE TRIGGER memory_search_term_after_truncate AFTER TRUNCATE ON memory_memory
    FOR EACH STATEMENT EXECUTE FUNCTION memory_search_term_truncate();

INSERT INTO memory_search_term
SELECT memory.id, memory.tenant_id, memory.subject_id, term.*
  FROM memory_memory AS memory
 CROSS JOIN LATERAL memory_search_term_rows(memory.search_vector) AS term;
ANALYZE memory_search_term;
"""

REVERSE = """
DROP TRIGGER IF EXISTS memory_search_term_after_truncate ON memory_memory;
DROP TRIGGER IF EXISTS memory_search_term_after_delete ON memory_memory;
DROP TRIGGER IF EXISTS memory_search_term_after_update ON memory_memory;
DROP TRIGGER IF EXISTS memory_search_term_after_insert ON memory_memory;
DROP FUNCTION IF EXISTS memory_search_term_truncate();
DROP FUNCTION IF EXISTS memory_search_term_delete();
DROP FUNCTION IF EXISTS memory_search_term_update();
DROP FUNCTION IF EXISTS memory_search_term_insert();
DROP FUNCTION IF EXISTS memory_search_term_rows(tsvector);
DROP TABLE IF EXISTS memory_search_term;
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0019_memory_inline_search_vector")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
