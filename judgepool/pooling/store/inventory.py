"""What is in a database: runs, queries and counts, for `judgepool runs | queries | status`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import PURPOSES
from judgepool.pooling.store.sql import one

if TYPE_CHECKING:
    import duckdb


#: status_counts' key for each label purpose's count (`label`: the labels that can count).
_COUNT = {"label": "count"}


@dataclass(frozen=True)
class RunInfo:
    """One ingested run."""

    name: str
    rows: int
    queries: int
    format: str
    source_file: str
    ingested_at: str


@dataclass(frozen=True)
class QueryInfo:
    """One query with how much is known about it."""

    qid: str
    text: str | None
    runs: int
    human_labels: int
    judge_labels: int


def list_runs(store: Store) -> list[RunInfo]:
    """Every run, by name."""
    with store.read() as con:
        rows = con.execute(
            "SELECT name, n_rows, n_queries, format, source_file, "
            "strftime(ingested_at, '%Y-%m-%d %H:%M:%S') FROM runs ORDER BY name"
        ).fetchall()
    return [RunInfo(str(a), int(b), int(c), str(d), str(e), str(f)) for a, b, c, d, e, f in rows]


def list_queries(store: Store) -> list[QueryInfo]:
    """Every query known from a topics file, a run or a label, by qid."""
    with store.read() as con:
        rows = con.execute(
            """
            WITH ids AS (SELECT qid FROM queries UNION SELECT DISTINCT qid FROM run_rows
                         UNION SELECT DISTINCT qid FROM judgments),
            r AS (SELECT qid, count(DISTINCT run_key) AS n FROM run_rows GROUP BY qid),
            j AS (SELECT qid, count(*) FILTER (WHERE source = 'human') AS h,
                         count(*) FILTER (WHERE source = 'judge' AND status = 'ok'
                                          AND purpose = 'label') AS l
                  FROM judgments GROUP BY qid)
            SELECT ids.qid, q.text, coalesce(r.n, 0), coalesce(j.h, 0), coalesce(j.l, 0)
            FROM ids LEFT JOIN queries q USING (qid) LEFT JOIN r USING (qid) LEFT JOIN j USING (qid)
            ORDER BY ids.qid"""
        ).fetchall()
    return [QueryInfo(str(a), b, int(c), int(d), int(e)) for a, b, c, d, e in rows]


def status_counts(store: Store) -> dict[str, Any]:
    """Counts of everything, and the labels by level, source, labeller and status: `count` is
    the labels that can count (purpose `label`); each other purpose (canary, calibration: checks
    of a judge, never effective) has its own count beside it."""
    with store.read() as con:
        (queries,) = one(con, "SELECT count(*) FROM queries")
        docs, no_text, parents = one(
            con,
            "SELECT count(*), count(*) FILTER (WHERE text IS NULL), "
            "count(DISTINCT parent_id) FROM docs",
        )
        runs, rows = one(con, "SELECT count(*), coalesce(sum(n_rows), 0) FROM runs")
        by_purpose = ", ".join(f"count(*) FILTER (WHERE purpose = '{p}')" for p in PURPOSES)
        labels = con.execute(
            f"SELECT level, source, labeller, status, {by_purpose} FROM judgments "
            "GROUP BY level, source, labeller, status ORDER BY level, source, labeller, status"
        ).fetchall()
        (version,) = one(con, "SELECT max(version) FROM schema_migrations")
    return {
        "schema_version": int(version),
        "queries": int(queries),
        "docs": int(docs),
        "docs_without_text": int(no_text),
        "parent_documents": int(parents),
        "runs": int(runs),
        "run_rows": int(rows),
        "labels": [
            {
                "level": a,
                "source": b,
                "labeller": c,
                "status": d,
                **{_COUNT.get(p, p): int(n) for p, n in zip(PURPOSES, counts, strict=True)},
            }
            for a, b, c, d, *counts in labels
        ],
    }


def fingerprint(store: Store) -> tuple[str, ...]:
    """A small value that changes whenever labels, runs, docs, queries, audit samples or
    calibration runs change (one short read: the dashboard keys its caches on it)."""
    with store.read() as con:
        return fingerprint_in(con)


def fingerprint_in(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """The fingerprint, read on an open connection. Its first value is the highest label id
    (`label_mark_of`)."""
    row = con.execute(
        """SELECT (SELECT max(id) FROM judgments), (SELECT count(*) FROM judgments),
                  (SELECT max(ingested_at) FROM runs), (SELECT count(*) FROM runs),
                  (SELECT max(ingested_at) FROM docs), (SELECT count(*) FROM docs),
                  (SELECT max(ingested_at) FROM queries), (SELECT count(*) FROM queries),
                  (SELECT max(id) FROM audit_samples), (SELECT max(id) FROM calibration_runs)"""
    ).fetchone()
    return tuple(str(v) for v in row) if row else ()


def same_but_labels(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two fingerprints differ in their labels at most (same runs, docs, queries, audit
    samples and calibration runs)."""
    return a[2:] == b[2:]


def label_mark_of(fingerprint: tuple[str, ...]) -> int:
    """The highest label id when `fingerprint` was read (0: no label): labels written since
    have higher ids (see `labels.label_mark`)."""
    return int(fingerprint[0]) if fingerprint and fingerprint[0].isdigit() else 0


def all_query_texts(store: Store) -> dict[str, str]:
    """qid -> text of every query that has one."""
    with store.read() as con:
        rows = con.execute("SELECT qid, text FROM queries").fetchall()
    return {str(q): str(t) for q, t in rows}
