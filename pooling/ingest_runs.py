"""Ingest a run (TREC, JSONL or Parquet) into the database in one transaction.

The rank of every row is computed here, once, in trec_eval's order (score descending, then doc id
descending, byte-wise): everything downstream (pools, judged@k, every measure) reads `rank` and
never sorts again, so the tie order cannot drift between components. Re-ingesting a run under an
existing name swaps it in the same transaction: readers see the old run or the new one, never a
half-written or empty one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.errors import InputError, UsageError
from judgepool.pooling.fastscan import PY_WHITESPACE, scan_columns
from judgepool.pooling.formats import check_readable, detect_format
from judgepool.pooling.readers import RunColumns, read_jsonl_run, read_trec_run
from judgepool.pooling.sql import one, scalar, temp_table_from
from judgepool.pooling.store import Store, utcnow

if TYPE_CHECKING:
    import duckdb

_TABLE = "_ingest_run"
_TREC_COLUMNS = {
    "qid": "VARCHAR",
    "q0": "VARCHAR",
    "doc_id": "VARCHAR",
    "rank": "VARCHAR",
    "score": "DOUBLE",
    "tag": "VARCHAR",
}


@dataclass(frozen=True)
class RunIngested:
    """What one `ingest run` did."""

    name: str
    path: str
    format: str
    rows: int
    queries: int
    replaced: bool


def default_run_name(path: Path) -> str:
    """`splade.trec.gz` -> `splade`: the file name without `.gz` and its last extension."""
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem
    return stem or name


def check_run_name(name: str) -> str:
    """Run names are non-empty and free of whitespace (they appear in commands and TREC tags)."""
    if not name or any(ch.isspace() for ch in name):
        raise UsageError(
            f"run name {name!r} is empty or contains whitespace",
            "choose a name with --name, e.g. --name splade-v2",
        )
    return name


def _register_columns(con: duckdb.DuckDBPyConnection, cols: RunColumns) -> None:
    import pyarrow as pa

    table = pa.table(
        {
            "qid": pa.array(cols.qids, pa.string()),
            "doc_id": pa.array(cols.doc_ids, pa.string()),
            "score": pa.array(cols.scores, pa.float64()),
        }
    )
    temp_table_from(con, _TABLE, table)


def _load_trec(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    fast = scan_columns(
        con,
        path,
        _TABLE,
        _TREC_COLUMNS,
        {"qid": "qid", "doc_id": "doc_id", "score": "score"},
        id_columns=("qid", "doc_id"),
        float_columns=("score",),
    )
    if fast:
        return
    # The exact reader either loads what the fast scan could not, or names the bad line.
    _register_columns(con, read_trec_run(path))


def _load_parquet(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    import duckdb

    try:
        described = con.execute("DESCRIBE SELECT * FROM read_parquet($p)", {"p": str(path)})
        names = [r[0] for r in described.fetchall()]
    except duckdb.Error as err:
        raise InputError(path, f"not a readable Parquet file: {err}") from None
    doc_col = next((c for c in ("doc_id", "docid") if c in names), None)
    present = {"qid": "qid" in names, "doc_id": doc_col is not None, "score": "score" in names}
    missing = [column for column, ok in present.items() if not ok]
    if missing or doc_col is None:
        raise InputError(
            path,
            f"missing column(s) {', '.join(missing)}; found {', '.join(names)}",
            hint="a Parquet run needs columns qid, doc_id (or docid) and score",
        )
    try:
        con.execute(
            f"CREATE TEMP TABLE {_TABLE} AS SELECT row_number() OVER () AS row_no, "
            f"CAST(qid AS VARCHAR) AS qid, CAST({doc_col} AS VARCHAR) AS doc_id, "
            f"CAST(score AS DOUBLE) AS score FROM read_parquet($p)",
            {"p": str(path)},
        )
    except duckdb.Error as err:
        raise InputError(path, f"cannot read the run's columns: {err}") from None
    bad = con.execute(
        f"SELECT row_no, qid, doc_id, score FROM {_TABLE} WHERE qid IS NULL OR doc_id IS NULL "
        f"OR qid = '' OR doc_id = '' OR regexp_matches(qid, '{PY_WHITESPACE}') "
        f"OR regexp_matches(doc_id, '{PY_WHITESPACE}') OR score IS NULL OR isnan(score) "
        "ORDER BY row_no LIMIT 1"
    ).fetchone()
    if bad is not None:
        raise InputError(
            path,
            f"row {bad[0]}: qid {bad[1]!r}, doc id {bad[2]!r}, score {bad[3]!r} — ids must be "
            "non-empty without whitespace and the score a number",
        )
    dup = con.execute(
        f"SELECT qid, doc_id, list(row_no ORDER BY row_no) FROM {_TABLE} GROUP BY qid, doc_id "
        "HAVING count(*) > 1 ORDER BY min(row_no) LIMIT 1"
    ).fetchone()
    if dup is not None:
        first, second = dup[2][0], dup[2][1]
        raise InputError(
            path,
            f"row {second}: doc {dup[1]!r} appears twice for query {dup[0]!r} (first: row {first})",
        )
    con.execute(f"ALTER TABLE {_TABLE} DROP COLUMN row_no")


def ingest_run(
    store: Store, path: str | Path, name: str | None = None, fmt: str | None = None
) -> RunIngested:
    """Read the run at `path` and store it under `name` (default: the file's stem)."""
    path = Path(path)
    check_readable(path)
    fmt = detect_format(path, "run", fmt)
    name = check_run_name(name if name is not None else default_run_name(path))
    with store.write(create=True) as con:
        if fmt == "trec":
            _load_trec(con, path)
        elif fmt == "jsonl":
            _register_columns(con, read_jsonl_run(path))
        else:
            _load_parquet(con, path)
        rows, queries = one(con, f"SELECT count(*), count(DISTINCT qid) FROM {_TABLE}")
        old = con.execute("SELECT run_key FROM runs WHERE name = ?", [name]).fetchone()
        new_key = int(scalar(con, "SELECT coalesce(max(run_key), 0) + 1 FROM runs"))
        con.execute(
            "INSERT INTO run_rows SELECT ?, qid, doc_id, score, "
            "row_number() OVER (PARTITION BY qid ORDER BY score DESC, doc_id DESC) "
            f"FROM {_TABLE}",
            [new_key],
        )
        if old is not None:
            con.execute("DELETE FROM run_rows WHERE run_key = ?", [old[0]])
            con.execute("DELETE FROM runs WHERE name = ?", [name])
        con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
            [name, new_key, str(path.resolve()), fmt, rows, queries, utcnow()],
        )
        con.execute(f"DROP TABLE {_TABLE}")
    return RunIngested(name, str(path), fmt, rows, queries, replaced=old is not None)
