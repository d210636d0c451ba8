"""The database schema as named, numbered migrations; the store applies the missing ones in order.

A migration is never edited once released: a change to the schema is a new entry at the end of
`MIGRATIONS`. The applied ones are recorded in `schema_migrations`, so a database written by a
newer judgepool is recognised and refused instead of being misread.

Tables (one word per noun, as in DESIGN.md):
- queries(qid, text)                     the questions
- docs(doc_id, text, title, parent_id, content_hash)   passages or chunks; parent_id = document
- runs(name, run_key, ...)               one row per named ranking
- run_rows(run_key, qid, doc_id, score, rank)   rank = trec_eval order, computed at ingest;
                                         doc_id compressed with zstd (migration 12)
- judgments(...)                         every label ever written, with provenance; source is
                                         `human` or `judge` (any judge: an LLM, the offline one);
                                         purpose is `label`, `calibration` or `canary`
- claims(key, holder, claimed_at, expires_at)   who pays for an answer now (store/claims.py)
- query_groups(qid, group_name, ...)     a query's groups (class, language, source ...): one row
                                         per membership (pooling/store/query_groups.py)
- floors(id, level, measure, value, ...) every floor ever set, with who and when; the latest per
                                         (level, measure) holds (pooling/store/floors.py)
- calibration_runs(...)                  a judge re-judging human-labelled pairs: its labeller,
                                         prompt hash, sample seed and figures (pooling/calibration)
- audit_samples(...), audit_sample_queries(sample_id, position, qid)   queries drawn at random
                                         for a person to audit (pooling/audit/samples.py), and
  audit_sample_frame(sample_id, qid, ...)  a weighted draw's score and inclusion probability
                                         for every query it was drawn from
- batches(local_id, batch_id, ...)       one provider batch each, from intent to collection, and
  batch_pairs(local_id, custom_id, ...)  the pairs each answers (pooling/store/batches.py)
- judge_runs(id, session, labeller, ...)  one row per judge (or jury) per `judge` run, with its
                                         canary check (pooling/store/judge_runs.py)
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
        # What a label is for: 'label' (it may be effective, it is exported) or a check of a judge,
        # 'calibration' (re-judging pairs people labelled) or 'canary' (a planted pair of known
        # grade), which never count as labels. Checked by pooling.store.judgments.Judgment (DuckDB
        # cannot add a CHECK with a column).
        """
        ALTER TABLE judgments ADD COLUMN purpose VARCHAR NOT NULL DEFAULT 'label';
        """,
    ),
    Migration(
        5,
        "query_groups",
        # The groups a query belongs to (query class, language, source ...), one row per
        # membership; a query may be in several groups or none. Written by `ingest queries`
        # (--groups FILE or a group column); a query ingested again gets its groups replaced.
        """
        CREATE TABLE query_groups (
            qid VARCHAR NOT NULL,
            group_name VARCHAR NOT NULL,
            source_file VARCHAR,
            ingested_at TIMESTAMP NOT NULL,
            PRIMARY KEY (qid, group_name)
        );
        """,
    ),
    Migration(
        6,
        "floors",
        # Floors under a measure's mean (`judgepool floors set`): every setting is kept; the
        # latest (highest id) per (level, measure) is the floor. from_run names the run whose
        # mean it was recorded from (null: a value given by hand); lowered marks a floor set
        # below the one before it (only with --lower).
        """
        CREATE SEQUENCE floor_ids START 1;
        CREATE TABLE floors (
            id BIGINT NOT NULL DEFAULT nextval('floor_ids') PRIMARY KEY,
            level VARCHAR NOT NULL CHECK (level IN ('chunk', 'doc')),
            measure VARCHAR NOT NULL,
            value DOUBLE NOT NULL,
            from_run VARCHAR,
            lowered BOOLEAN NOT NULL,
            set_by VARCHAR NOT NULL,
            set_at TIMESTAMP NOT NULL,
            note VARCHAR
        );
        """,
    ),
    Migration(
        7,
        "calibration_runs",
        # One row per `judgepool calibrate`: which judge (labeller, model, prompt hash), which
        # pairs (level, depth, seed, sample size asked and drawn) and what it found (figures:
        # JSON written by judgepool.api.trust, the labels themselves are judgments with purpose
        # 'calibration' written after label id `label_mark`).
        """
        CREATE SEQUENCE calibration_run_ids START 1;
        CREATE TABLE calibration_runs (
            id BIGINT NOT NULL DEFAULT nextval('calibration_run_ids') PRIMARY KEY,
            created_at TIMESTAMP NOT NULL,
            level VARCHAR NOT NULL CHECK (level IN ('chunk', 'doc')),
            depth INTEGER NOT NULL,
            labeller VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            prompt_hash VARCHAR,
            seed BIGINT NOT NULL,
            sample_size INTEGER NOT NULL,
            pairs INTEGER NOT NULL,
            label_mark BIGINT NOT NULL,
            figures JSON NOT NULL
        );
        """,
    ),
    Migration(
        8,
        "audit_samples",
        # Queries drawn uniformly at random from the evaluation set for a person to audit: the
        # draw (seed, evaluation-set size, inclusion probability) and what to list (level, depth,
        # runs as a JSON list, [] = every run; the judge's labeller, null = any judge). The
        # queries are in audit_sample_queries in draw order; the latest sample of a level is
        # the one in use.
        """
        CREATE SEQUENCE audit_sample_ids START 1;
        CREATE TABLE audit_samples (
            id BIGINT NOT NULL DEFAULT nextval('audit_sample_ids') PRIMARY KEY,
            created_at TIMESTAMP NOT NULL,
            level VARCHAR NOT NULL CHECK (level IN ('chunk', 'doc')),
            depth INTEGER NOT NULL,
            runs JSON NOT NULL,
            labeller VARCHAR,
            seed BIGINT NOT NULL,
            evaluation_set INTEGER NOT NULL,
            inclusion_probability DOUBLE NOT NULL
        );
        CREATE TABLE audit_sample_queries (
            sample_id BIGINT NOT NULL,
            position INTEGER NOT NULL,
            qid VARCHAR NOT NULL
        );
        """,
    ),
    Migration(
        9,
        "batches",
        # A provider batch (judge --batch) from the moment it is intended to its collection:
        # local_id is ours, known before the provider's batch_id exists (a process killed between
        # creating the batch and recording it finds it again by local_id in the batch's metadata).
        # status is 'submitting' until the provider has the batch, then the provider's own.
        # batch_pairs maps each line's custom_id to the pairs it answers and, once collected, their
        # outcome (ok, unparsed, error, missing) and why. See pooling/store/batches.py.
        """
        CREATE TABLE batches (
            local_id VARCHAR NOT NULL,
            batch_id VARCHAR,
            provider VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            labeller VARCHAR NOT NULL,
            api_base_host VARCHAR,
            judge JSON NOT NULL,
            settings JSON NOT NULL,
            file_sha256 VARCHAR NOT NULL,
            file_bytes BIGINT NOT NULL,
            input_file_id VARCHAR,
            output_file_id VARCHAR,
            error_file_id VARCHAR,
            status VARCHAR NOT NULL,
            requests INTEGER NOT NULL,
            pairs INTEGER NOT NULL,
            completed INTEGER NOT NULL DEFAULT 0,
            failed INTEGER NOT NULL DEFAULT 0,
            submitter VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            provider_created_at TIMESTAMP,
            updated_at TIMESTAMP NOT NULL,
            collected_at TIMESTAMP,
            last_error VARCHAR
        );
        CREATE TABLE batch_pairs (
            local_id VARCHAR NOT NULL,
            custom_id VARCHAR NOT NULL,
            cache_key VARCHAR NOT NULL,
            qid VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            level VARCHAR NOT NULL,
            shown JSON NOT NULL,
            truncated BOOLEAN NOT NULL,
            query_truncated BOOLEAN NOT NULL,
            outcome VARCHAR,
            kind VARCHAR
        );
        """,
    ),
    Migration(
        10,
        "judge_runs",
        # One row per labeller (a judge, a jury member, a jury) per `judge` or `calibrate` run:
        # what it was told, what it did, and its canary check. `fooled` is set when a kind of
        # canary was graded >= 2 more often than `canary_threshold`; reports that use the
        # labeller's labels say so (pooling/store/judge_runs.py). `session` groups the rows of one
        # run.
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
    Migration(
        11,
        "audit_designs",
        # How an audit sample was drawn: `uniform` (every query with probability n / N, the
        # samples before this migration) or `weighted` (pooling/audit/design.py: with
        # probability rising with the judge's uncertainty). A weighted draw records, for every
        # query of the evaluation set it was drawn from, the uncertainty score its size measure
        # came from and its inclusion probability (0: not drawable, a query whose labels are
        # all human), which the corrected estimate weighs each audited query by.
        """
        ALTER TABLE audit_samples ADD COLUMN design VARCHAR NOT NULL DEFAULT 'uniform';
        CREATE TABLE audit_sample_frame (
            sample_id BIGINT NOT NULL,
            qid VARCHAR NOT NULL,
            score DOUBLE NOT NULL,
            probability DOUBLE NOT NULL
        );
        """,
    ),
    Migration(
        12,
        "run_doc_ids_zstd",
        # The runs' doc ids are compressed with zstd instead of DuckDB's own choice (a
        # dictionary, then FSST): a run's doc ids are nearly all distinct, so the dictionary
        # saves little and building it was a third of an ingest's insert. Measured (issue 23):
        # ingest of 10M run rows 0.89x the time, files to numbers 0.92x; the run rows take
        # 1.46x the space (10M rows: 97 -> 142 MB); reads are unchanged (holes listing on 10M
        # rows 0.16 s, loading the measures' rows 0.30-0.33 s, both before and after). The
        # rows are copied in (run, rank, qid) order, the order an ingest writes each run in:
        # once, by the first command after the upgrade (10M rows: 3.1 s, peak 791 MiB), and
        # DuckDB keeps the old rows' blocks in the file as free space for later writes (that
        # file: 98 MB before, 233 MB after).
        """
        CREATE TABLE run_rows_zstd (
            run_key INTEGER NOT NULL,
            qid VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL USING COMPRESSION zstd,
            score DOUBLE NOT NULL,
            rank INTEGER NOT NULL
        );
        INSERT INTO run_rows_zstd
            SELECT run_key, qid, doc_id, score, rank FROM run_rows ORDER BY run_key, rank, qid;
        DROP TABLE run_rows;
        ALTER TABLE run_rows_zstd RENAME TO run_rows;
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
