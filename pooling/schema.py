"""The database schema as named, numbered migrations; the store applies the missing ones in order.

A migration is never edited once released: a change to the schema is a new entry at the end of
`MIGRATIONS`. The applied ones are recorded in `schema_migrations`, so a database written by a
newer judgepool is recognised and refused instead of being misread.

Tables (one word per noun, as in DESIGN.md):
- queries(qid, text)                     the questions
- docs(doc_id, text, title, parent_id, content_hash)   passages or chunks; parent_id = document
- runs(name, run_key, ...)               one row per named ranking
- run_rows(run_key, qid, doc_id, score, rank)   rank = trec_eval order, computed at ingest
- judgments(...)                         every label ever written, with provenance; source is
                                         `human` or `judge` (any judge: an LLM, the offline one);
                                         purpose is `label`, `calibration` or `canary`
- claims(key, holder, claimed_at, expires_at)   who is paying for an answer now (pooling/claims.py)
- judge_runs(id, session, labeller, ...)  one row per judge (or jury) per `judge` run, with its
                                         canary check (pooling/judge_runs.py)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One schema change: `version` orders them, `name` says what it does."""

    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "initial_tables",
        """
        CREATE TABLE queries (
            qid VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            source_file VARCHAR,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE TABLE docs (
            doc_id VARCHAR NOT NULL,
            text VARCHAR,
            title VARCHAR,
            parent_id VARCHAR,
            content_hash VARCHAR,
            source_file VARCHAR,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE TABLE runs (
            name VARCHAR NOT NULL,
            run_key INTEGER NOT NULL,
            source_file VARCHAR NOT NULL,
            format VARCHAR NOT NULL,
            n_rows BIGINT NOT NULL,
            n_queries INTEGER NOT NULL,
            ingested_at TIMESTAMP NOT NULL
        );
        CREATE TABLE run_rows (
            run_key INTEGER NOT NULL,
            qid VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            score DOUBLE NOT NULL,
            rank INTEGER NOT NULL
        );
        CREATE SEQUENCE judgment_ids START 1;
        CREATE TABLE judgments (
            id BIGINT NOT NULL DEFAULT nextval('judgment_ids'),
            qid VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            level VARCHAR NOT NULL CHECK (level IN ('chunk', 'doc')),
            grade INTEGER,
            source VARCHAR NOT NULL CHECK (source IN ('human', 'llm')),
            labeller VARCHAR NOT NULL,
            status VARCHAR NOT NULL CHECK (status IN ('ok', 'unparsed', 'error', 'no_text')),
            raw_output VARCHAR,
            tokens_in INTEGER,
            tokens_out INTEGER,
            cost DOUBLE,
            latency_s DOUBLE,
            provenance JSON,
            note VARCHAR,
            created_at TIMESTAMP NOT NULL,
            CHECK (status <> 'ok' OR grade IS NOT NULL)
        );
        """,
    ),
    Migration(
        2,
        "judge_claims",
        # key: what is paid for (a judge cache key); holder: `judge:...` for a running judge
        # process, `batch:...` for a provider batch; a claim past expires_at belongs to nobody.
        """
        CREATE TABLE claims (
            key VARCHAR NOT NULL PRIMARY KEY,
            holder VARCHAR NOT NULL,
            claimed_at TIMESTAMP NOT NULL,
            expires_at TIMESTAMP NOT NULL
        );
        """,
    ),
    Migration(
        3,
        "judge_source",
        # A judge's label was stored with source 'llm', the offline judge's too: the source is
        # who labelled (a person or a judge), the labeller says which judge. DuckDB cannot alter
        # a CHECK constraint, so the table is rebuilt (ids, order and the id sequence kept).
        """
        CREATE TABLE judgments_new (
            id BIGINT NOT NULL DEFAULT nextval('judgment_ids'),
            qid VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            level VARCHAR NOT NULL CHECK (level IN ('chunk', 'doc')),
            grade INTEGER,
            source VARCHAR NOT NULL CHECK (source IN ('human', 'judge')),
            labeller VARCHAR NOT NULL,
            status VARCHAR NOT NULL CHECK (status IN ('ok', 'unparsed', 'error', 'no_text')),
            raw_output VARCHAR,
            tokens_in INTEGER,
            tokens_out INTEGER,
            cost DOUBLE,
            latency_s DOUBLE,
            provenance JSON,
            note VARCHAR,
            created_at TIMESTAMP NOT NULL,
            CHECK (status <> 'ok' OR grade IS NOT NULL)
        );
        INSERT INTO judgments_new
            SELECT id, qid, doc_id, level, grade,
                   CASE WHEN source = 'llm' THEN 'judge' ELSE source END,
                   labeller, status, raw_output, tokens_in, tokens_out, cost, latency_s,
                   provenance, note, created_at
            FROM judgments ORDER BY id;
        DROP TABLE judgments;
        ALTER TABLE judgments_new RENAME TO judgments;
        """,
    ),
    Migration(
        4,
        "judgment_purpose",
        # What a label is for: 'label' (it may be effective, it is exported) or a check of a
        # judge, 'calibration' (re-judging pairs people labelled) or 'canary' (a planted pair of
        # known grade), which never count as labels. Checked by pooling.labels.Judgment (DuckDB
        # cannot add a CHECK with a column).
        """
        ALTER TABLE judgments ADD COLUMN purpose VARCHAR NOT NULL DEFAULT 'label';
        """,
    ),
    Migration(
        5,
        "judge_runs",
        # One row per labeller (a judge, a jury member, a jury) per `judge` or `calibrate` run:
        # what it was told, what it did, and its canary check. `fooled` is set when a kind of
        # canary was graded >= 2 more often than `canary_threshold`; reports that use the
        # labeller's labels say so (pooling/judge_runs.py). `session` groups the rows of one run.
        """
        CREATE SEQUENCE judge_run_ids START 1;
        CREATE TABLE judge_runs (
            id BIGINT NOT NULL DEFAULT nextval('judge_run_ids') PRIMARY KEY,
            session VARCHAR NOT NULL,
            command VARCHAR NOT NULL,
            labeller VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            level VARCHAR NOT NULL,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            settings JSON,
            outcome JSON,
            canaries INTEGER NOT NULL DEFAULT 0,
            canaries_graded INTEGER NOT NULL DEFAULT 0,
            canary_threshold DOUBLE,
            canary_rates JSON,
            fooled BOOLEAN NOT NULL DEFAULT false
        );
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
