"""Ingest runs (TREC, JSONL or Parquet): parse and rank away from the database, then swap in.

Each file is parsed, checked and ranked on a scratch in-memory connection; the database's write
lock is taken only to swap the finished run in, in one short transaction, so a judge or the
dashboard writing meanwhile waits for the swap, never for the parse. Readers see the old run or
the new one, never a half-written or empty one.

The rank of every row is computed here, once, in trec_eval's order: score descending as a 32-bit
float (trec_eval keeps scores as C floats, so two scores equal in single precision are a tie),
then doc id descending, byte-wise. Everything downstream (pools, judged@k, every measure) reads
`rank` and never sorts again; the score column keeps the double the file gave.

A run's name is --name, else the file's tag when every line carries the same one (the TREC 6th
column), else the file name's stem. Files given together are all parsed before any is written,
and two that would get the same name are refused.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import Call, Param, Remedy, UsageError, remedy
from judgepool.pooling.io.fastscan import scan_run
from judgepool.pooling.io.formats import check_readable, detect_format
from judgepool.pooling.io.parquet_runs import load_parquet_run
from judgepool.pooling.io.readers import RunColumns, read_jsonl_run, read_trec_run
from judgepool.pooling.io.sniff import wrong_kind_hints
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.sql import registered, scalar, scratch, temp_table_from

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

_TABLE = "_ingest_run"
# 2**128 - 2**103: a double from here on rounds to infinity as a float, as C's conversion does.
_FLOAT_OVERFLOW = "3.4028235677973366e38"
#: The score as trec_eval holds it (a C float); DuckDB's own cast refuses what would overflow.
FLOAT32_SCORE = (
    f"CASE WHEN score >= {_FLOAT_OVERFLOW} THEN 'inf'::FLOAT "
    f"WHEN score <= -{_FLOAT_OVERFLOW} THEN '-inf'::FLOAT ELSE CAST(score AS FLOAT) END"
)


@dataclass(frozen=True)
class RunIngested:
    """What one `ingest run` did."""

    name: str
    path: str
    format: str
    rows: int
    queries: int
    replaced: bool


@dataclass(frozen=True)
class ParsedRun:
    """A run read, checked and ranked, not yet in the database."""

    path: Path
    format: str
    table: pa.Table  # qid, doc_id, score, rank
    queries: int
    tag: str | None  # the file's tag, when every line carries the same one
    origin: str = ""  # what the run came from, as recorded (the resolved path by default)


def default_run_name(path: Path) -> str:
    """`splade.trec.gz` -> `splade`: the file name without `.gz` and its last extension."""
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = Path(name).stem
    return stem or name


def check_run_name(name: str, origin: str = "") -> str:
    """Run names are non-empty, without whitespace or control characters (they appear in
    commands and TREC tags)."""
    if not name:
        why = "is empty"
    elif any(ch.isspace() for ch in name):
        why = "contains whitespace"
    elif any(unicodedata.category(ch) == "Cc" for ch in name):
        why = "contains a control character"
    else:
        return name
    raise UsageError(
        f"run name {name!r}{origin} {why}",
        remedy("choose a name with {}, e.g. {}", Param("name", None), Param("name", "splade-v2")),
        value=name,
    )


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


def _ranked(con: duckdb.DuckDBPyConnection) -> tuple[pa.Table, int]:
    """The run in trec_eval's order with its `rank` column, and its number of queries.

    One sort (query, score as a float descending, doc id descending); a row's rank is then its
    place in its query's block, found on the sorted columns (half the cost of a window). The
    rows stay in (qid, rank) order, which the database stores in half the space.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = con.sql(
        f"SELECT qid, doc_id, score FROM {_TABLE} ORDER BY qid, {FLOAT32_SCORE} DESC, doc_id DESC"
    ).to_arrow_table()
    rows = table.num_rows
    qids = table.column("qid")
    changes = pc.not_equal(qids.slice(1), qids.slice(0, rows - 1)).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.concatenate(([True], changes)))
    lengths = np.diff(np.append(starts, rows))
    rank = np.arange(1, rows + 1, dtype=np.int64) - np.repeat(starts, lengths)
    return table.append_column("rank", pa.array(rank.astype(np.int32))), int(starts.size)


def parse_run(path: str | Path, fmt: str | None = None, origin: str | None = None) -> ParsedRun:
    """Read, check and rank the run at `path`, without touching the database; `origin` is what
    the database records as its source (default: the resolved path)."""
    path = Path(path)
    check_readable(path)
    tags: list[str] = []
    with wrong_kind_hints(path, "run"):
        fmt = detect_format(path, "run", fmt)
        with scratch() as con:
            if fmt == "trec":
                fast = scan_run(con, path, _TABLE)
                if fast is None:
                    # The exact reader reads what the fast scan does not, or names the bad line.
                    cols = read_trec_run(path)
                    _register_columns(con, cols)
                    tags = cols.tags
                else:
                    tags = fast
            elif fmt == "jsonl":
                _register_columns(con, read_jsonl_run(path))
            else:
                load_parquet_run(con, path, _TABLE)
            table, queries = _ranked(con)
    tag = tags[0] if len(tags) == 1 else None
    return ParsedRun(path, fmt, table, queries, tag, origin or str(path.resolve()))


def _name_of(parsed: ParsedRun, name: str | None) -> tuple[str, str | Remedy]:
    """(the run's name, where it came from)."""
    if name is not None:
        return check_run_name(name), remedy("from {}", Param("name", None))
    if parsed.tag is not None:
        return check_run_name(parsed.tag, f" (the tag of {parsed.path})"), "named by their tag"
    return check_run_name(default_run_name(parsed.path)), "named by their file name"


def store_run(store: Store, parsed: ParsedRun, name: str) -> RunIngested:
    """Swap a parsed run into the database under `name`, in one short transaction."""
    rows, now = parsed.table.num_rows, utcnow()
    with store.write(create=True) as con, registered(con, "_run_arrow", parsed.table):
        old = con.execute("SELECT run_key FROM runs WHERE name = ?", [name]).fetchone()
        new_key = int(scalar(con, "SELECT coalesce(max(run_key), 0) + 1 FROM runs"))
        con.execute(
            "INSERT INTO run_rows SELECT ?, qid, doc_id, score, rank FROM _run_arrow", [new_key]
        )
        if old is not None:
            con.execute("DELETE FROM run_rows WHERE run_key = ?", [old[0]])
            con.execute("DELETE FROM runs WHERE name = ?", [name])
        con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
            [name, new_key, parsed.origin, parsed.format, rows, parsed.queries, now],
        )
    shown = str(parsed.path) if parsed.origin == str(parsed.path.resolve()) else parsed.origin
    return RunIngested(name, shown, parsed.format, rows, parsed.queries, old is not None)


def ingest_runs(
    store: Store,
    paths: Sequence[str | Path],
    name: str | None = None,
    fmt: str | None = None,
) -> list[RunIngested]:
    """Read every run, name each, refuse a clash, then store them one short transaction each."""
    if name is not None and len(paths) > 1:
        raise UsageError(
            remedy(f"{{}} names one run, but {len(paths)} files were given", Param("name", None)),
            remedy(
                "give one file per {} (one call each), or leave {} out: each run is then named "
                "by its tag (the TREC 6th column) or, without one tag, its file name",
                Param("name", None),
                Param("name", None),
            ),
            value=name,
        )
    parsed = [parse_run(path, fmt) for path in paths]
    named: dict[str, ParsedRun] = {}
    for run in parsed:
        run_name, origin = _name_of(run, name)
        if run_name in named:
            first = named[run_name].path
            raise UsageError(
                f"{first} and {run.path} would both be run {run_name!r} ("
                + origin
                + "); nothing was ingested",
                remedy(
                    "ingest them one at a time with {}, e.g. `{}`",
                    Param("name", None),
                    Call.of("ingest_run", str(run.path), name=f"{run_name}-2"),
                ),
                value=run_name,
            )
        named[run_name] = run
    return [store_run(store, run, run_name) for run_name, run in named.items()]


def ingest_run(
    store: Store,
    path: str | Path,
    name: str | None = None,
    fmt: str | None = None,
    origin: str | None = None,
) -> RunIngested:
    """Read the run at `path` and store it under `name` (default: its tag, else its stem);
    `origin` is what the database records as its source (default: the resolved path)."""
    if origin is None:
        return ingest_runs(store, [path], name, fmt)[0]
    parsed = parse_run(path, fmt, origin)
    return store_run(store, parsed, _name_of(parsed, name)[0])
