"""Each tenant's articles and each author's, kept by triggers, so the article quotas read two
rows instead of counting the tenant's articles.

Counting them on every insert, under the tenant's knowledge lock, cost a write time in
proportion to the tenant (an index-only scan that still visits every heap page), and no other
write of the tenant's wiki could run meanwhile.

``knowledge_tenant_article_usage`` and ``knowledge_author_article_usage`` are derived data: no
model, no service writes them. Triggers on ``knowledge_article`` keep ``articles`` equal to the
number of the tenant's (the author's) rows, archived ones included, on every path (the ORM,
restores, forget, erasure, raw SQL, truncation):

* INSERT, DELETE: one statement-level upsert per tenant and per author, the tenant's row first;
* UPDATE of an article's tenant or author: its counts move;
* TRUNCATE: the counts are truncated too.

A transaction that moves a tenant's counts holds the tenant's row until it commits, so every
one of them takes that row before any article or memory row (``lock_tenant_article_counts``):
the inserts under the knowledge lock, forget before its memory, an erasure before the memory
counts. A tenant or an author left with no article loses its row. Existing articles are counted
in this migration's transaction, with article writes held back (SHARE mode) so none is counted
twice or missed.
"""

from django.db import migrations

FORWARD = """
SET LOCAL statement_timeout = 0;

CREATE TABLE knowledge_tenant_article_usage (
    tenant_id uuid PRIMARY KEY,
    articles bigint NOT NULL
);
CREATE TABLE knowledge_author_article_usage (
    tenant_id uuid NOT NULL,
    author_subject_id varchar(200) NOT NULL,
    articles bigint NOT NULL,
    PRIMARY KEY (tenant_id, author_subject_id)
);

CREATE FUNCTION knowledge_article_usage_add(p_tenant uuid, p_author varchar, p_delta bigint)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO knowledge_tenant_article_usage AS usage (tenant_id, articles)
    VALUES (p_tenant, p_delta)
    ON CONFLICT (tenant_id) DO UPDATE SET articles = usage.articles + EXCLUDED.articles;
    DELETE FROM knowledge_tenant_article_usage WHERE tenant_id = p_tenant AND articles <= 0;
    INSERT INTO knowledge_author_article_usage AS usage (tenant_id, author_subject_id, articles)
    VALUES (p_tenant, p_author, p_delta)
    ON CONFLICT (tenant_id, author_subject_id)
    DO UPDATE SET articles = usage.articles + EXCLUDED.articles;
    DELETE FROM knowledge_author_article_usage
     WHERE tenant_id = p_tenant AND author_subject_id = p_author AND articles <= 0;
$$;

CREATE FUNCTION knowledge_article_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The tenants' rows first, then their authors', each in one order, as every writer.
    INSERT INTO knowledge_tenant_article_usage AS usage (tenant_id, articles)
    SELECT tenant_id, count(*) FROM inserted GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET articles = usage.articles + EXCLUDED.articles;
    INSERT INTO knowledge_author_article_usage AS usage (tenant_id, author_subject_id, articles)
    SELECT tenant_id, author_subject_id, count(*) FROM inserted
     GROUP BY tenant_id, author_subject_id ORDER BY tenant_id, author_subject_id
    ON CONFLICT (tenant_id, author_subject_id)
    DO UPDATE SET articles = usage.articles + EXCLUDED.articles;
    RETURN NULL;
END
$$;

CREATE FUNCTION knowledge_article_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_article_usage_add(gone.tenant_id, gone.author_subject_id, -gone.articles)
       FROM (SELECT tenant_id, author_subject_id, count(*) AS articles
               FROM deleted
              GROUP BY tenant_id, author_subject_id
              ORDER BY tenant_id, author_subject_id) AS gone;
    RETURN NULL;
END
$$;

CREATE FUNCTION knowledge_article_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM knowledge_article_usage_add(OLD.tenant_id, OLD.author_subject_id, -1);
    PERFORM knowledge_article_usage_add(NEW.tenant_id, NEW.author_subject_id, 1);
    RETURN NULL;
END
$$;

CREATE FUNCTION knowledge_article_usage_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE knowledge_tenant_article_usage, knowledge_author_article_usage;
    RETURN NULL;
END
$$;

CREATE TRIGGER knowledge_article_usage_after_insert AFTER INSERT ON knowledge_article
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_article_usage_insert();
CREATE TRIGGER knowledge_article_usage_after_delete AFTER DELETE ON knowledge_article
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_article_usage_delete();
CREATE TRIGGER knowledge_article_usage_after_update
    AFTER UPDATE OF tenant_id, author_subject_id ON knowledge_article
    FOR EACH ROW WHEN (
        (OLD.tenant_id, OLD.author_subject_id)
        IS DISTINCT FROM (NEW.tenant_id, NEW.author_subject_id)
    ) EXECUTE FUNCTION knowledge_article_usage_update();
CREATE TRIGGER knowledge_article_usage_after_truncate AFTER TRUNCATE ON knowledge_article
    FOR EACH STATEMENT EXECUTE FUNCTION knowledge_article_usage_truncate();

LOCK TABLE knowledge_article IN SHARE MODE;
INSERT INTO knowledge_tenant_article_usage (tenant_id, articles)
SELECT tenant_id, count(*) FROM knowledge_article GROUP BY tenant_id;
INSERT INTO knowledge_author_article_usage (tenant_id, author_subject_id, articles)
SELECT tenant_id, author_subject_id, count(*) FROM knowledge_article
 GROUP BY tenant_id, author_subject_id;
"""

REVERSE = """
DROP TRIGGER IF EXISTS knowledge_article_usage_after_truncate ON knowledge_article;
DROP TRIGGER IF EXISTS knowledge_article_usage_after_update ON knowledge_article;
DROP TRIGGER IF EXISTS knowledge_article_usage_after_delete ON knowledge_article;
DROP TRIGGER IF EXISTS knowledge_article_usage_after_insert ON knowledge_article;
DROP FUNCTION IF EXISTS knowledge_article_usage_truncate();
DROP FUNCTION IF EXISTS knowledge_article_usage_update();
DROP FUNCTION IF EXISTS knowledge_article_usage_delete();
DROP FUNCTION IF EXISTS knowledge_article_usage_insert();
DROP FUNCTION IF EXISTS knowledge_article_usage_add(uuid, varchar, bigint);
DROP TABLE IF EXISTS knowledge_author_article_usage;
DROP TABLE IF EXISTS knowledge_tenant_article_usage;
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0005_article_author")]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=REVERSE, hints={"target_db": "default"}),
    ]
