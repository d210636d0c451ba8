"""Ingest runs (TREC, JSONL or Parquet): parse and rank away from the database, then swap in.

Every file is parsed, checked and ranked away from the database (pooling/io/fastscan.py reads a
TREC file, pooling/run_order.py ranks; small runs in batches that share one sort, the batches on
one thread per core, a large run alone in pieces on every core: pooling/run_pieces.py); the
database's write lock is taken only to swap the finished runs in, all in one short transaction,
so a judge or the dashboard writing meanwhile waits for the swap, never for the parse. Readers
see the old runs or the new ones, never a half-written or empty one.

The rank of every row is computed here, once, in trec_eval's order: score descending as a 32-bit
float (trec_eval keeps scores as C floats, so two scores equal in single precision are a tie),
then doc id descending, byte-wise. Everything downstream (pools, judged@k, every measure) reads
`rank` and never sorts again; the score column keeps the double the file gave.

A run's name is --name, else the file's tag when every line carries the same one (the TREC 6th
column), else the file name's stem. Files given together are all parsed before any is written,
and two that would get the same name are refused.
"""

from __future__ import annotations

import contextlib
import os
import unicodedata
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import Call, Param, Remedy, UsageError, remedy
from judgepool.pooling.io.fastscan import scan_run
from judgepool.pooling.io.formats import check_readable, detect_format, is_gzip
from judgepool.pooling.io.parquet_runs import load_parquet_run
from judgepool.pooling.io.readers import RunColumns, read_jsonl_run, read_trec_run
from judgepool.pooling.io.sniff import wrong_kind_hints
from judgepool.pooling.run_order import from_numpy, rank_runs
from judgepool.pooling.run_pieces import parse_in_pieces
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.sql import registered, scratch

if TYPE_CHECKING:
    import pyarrow as pa

_PARQUET = "_ingest_parquet"
#: About how much text is parsed at once (see `_batches`).
_BATCH_BYTES = 96 << 20
#: A run this large (its text) alone in a batch is parsed in pieces, one per core.
_PIECE_BYTES = 32 << 20
#: DuckDB's rows per row group.
_ROW_GROUP = 122_880
#: The most rows one insert takes: 16 row groups, eight per core on two.
_INSERT_ROWS = 16 * _ROW_GROUP


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


def _columns_table(cols: RunColumns) -> pa.Table:
    import pyarrow as pa

    return pa.table(
        {
            "qid": pa.array(cols.qids, pa.string()),
            "doc_id": pa.array(cols.doc_ids, pa.string()),
            "score": pa.array(cols.scores, pa.float64()),
        }
    )


def _parquet_table(path: Path) -> pa.Table:
    with scratch() as con:
        load_parquet_run(con, path, _PARQUET)
        return con.sql(f"SELECT qid, doc_id, score FROM {_PARQUET}").to_arrow_table()


def _read_exactly(path: Path, fmt: str) -> tuple[pa.Table, str | None]:
    """A run the fast scan does not read: (its rows, its tag)."""
    with wrong_kind_hints(path, "run"):
        if fmt == "trec":
            # The exact reader reads what the fast scan does not, or names the bad line.
            cols = read_trec_run(path)
            return _columns_table(cols), cols.tags[0] if len(cols.tags) == 1 else None
        if fmt == "jsonl":
            return _columns_table(read_jsonl_run(path)), None
        return _parquet_table(path), None


def _raw_size(path: Path) -> int:
    """About how many bytes of text the file holds (a gzip file's trailer says, modulo 4 GiB)."""
    size = path.stat().st_size
    if not is_gzip(path):
        return size
    with path.open("rb") as fh:
        fh.seek(-4, 2)
        return max(int.from_bytes(fh.read(4), "little"), 4 * size)


def _workers() -> int:
    """How many batches are parsed at once: one per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


def _batches(sizes: Sequence[int], workers: int) -> list[list[int]]:
    """The files in consecutive groups parsed together: many small runs share one read and one
    set of checks. There are at least two groups per worker when there are files enough (so
    that no core waits long for the last one), of about equal text, each under
    `_BATCH_BYTES / workers` unless a single file is larger."""
    import math

    total, budget = sum(sizes), max(1, _BATCH_BYTES // workers)
    count = min(len(sizes), max(2 * workers, math.ceil(total / budget)))
    batches: list[list[int]] = []
    held, in_batch, cut = 0, 0, 0.0
    for i, size in enumerate(sizes):
        past_cut = held + size / 2 > cut and len(batches) < count  # its middle is past the cut
        if not batches or past_cut or in_batch + size > budget:
            batches.append([])
            in_batch, cut = 0, total * len(batches) / max(count, 1)
        batches[-1].append(i)
        held, in_batch = held + size, in_batch + size
    return batches


Parsed = list[tuple["pa.Table", int, str | None]]  # (table, queries, tag) of each run of a batch


def _parse_batch(paths: Sequence[Path], formats: Sequence[str]) -> Parsed:
    """Read, check and rank the runs at `paths`: (table, queries, tag) of each. A large run
    alone in its batch is parsed in pieces, one per core (pooling/run_pieces.py)."""
    if len(paths) == 1 and formats[0] == "trec" and _workers() > 1:
        with contextlib.suppress(OSError):  # the exact reader will say what
            if paths[0].stat().st_size >= _PIECE_BYTES:
                whole = parse_in_pieces(paths[0], _workers())
                if whole is not None:
                    return [whole]
    read: list[tuple[pa.Table, str | None]] = []
    for path, fmt in zip(paths, formats, strict=True):
        fast = scan_run(path) if fmt == "trec" else None
        read.append(fast if fast is not None else _read_exactly(path, fmt))
    ranked, twice = rank_runs([table for table, _ in read])
    if twice:
        # A pair listed twice: the exact reader names both lines (and refuses the file).
        for i in twice:
            read[i] = _read_exactly(paths[i], formats[i])
        ranked, twice = rank_runs([table for table, _ in read])
    return [(r.table, r.queries, tag) for r, (_, tag) in zip(ranked, read, strict=True)]


def _parse_all(
    files: Sequence[Path], formats: Sequence[str], sizes: Sequence[int], workers: int
) -> list[Parsed]:
    """Every batch parsed, on `workers` threads (the decompression, Arrow's reader and kernels,
    numpy's sorts and DuckDB all let other threads run): batches start in order while the text
    in flight stays under `_BATCH_BYTES`, or alone when one is larger. When batches fail, the
    error raised is the first failed batch's in the order given: the error a parse on one
    thread raises, whichever thread finishes first."""
    batches = _batches(sizes, workers)
    weight = [sum(sizes[i] for i in batch) for batch in batches]
    done: dict[int, Future[Parsed]] = {}
    running: dict[Future[Parsed], int] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judgepool-parse") as pool:
        for b, batch in enumerate(batches):
            while running and (
                len(running) >= workers
                or sum(weight[i] for i in running.values()) + weight[b] > _BATCH_BYTES
            ):
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    done[running.pop(future)] = future
            if any(future.exception() is not None for future in done.values()):
                break  # a batch failed: start nothing more
            future = pool.submit(
                _parse_batch, [files[i] for i in batch], [formats[i] for i in batch]
            )
            running[future] = b
        for future, b in running.items():
            done[b] = future
    # result() re-raises the first failed batch's error, in the order the files were given
    return [done[b].result() for b in sorted(done)]


def parse_runs(
    paths: Sequence[str | Path], fmt: str | None = None, origins: Sequence[str | None] = ()
) -> list[ParsedRun]:
    """Read, check and rank the runs at `paths`, without touching the database; `origins[i]` is
    what the database records as the source of run i (default: the resolved path)."""
    files = [Path(p) for p in paths]
    formats = []
    for path in files:
        check_readable(path)
        with wrong_kind_hints(path, "run"):
            formats.append(detect_format(path, "run", fmt))
    sizes = [_raw_size(path) for path in files]
    found = [run for parsed in _parse_all(files, formats, sizes, _workers()) for run in parsed]
    return [
        ParsedRun(
            files[i],
            formats[i],
            table,
            queries,
            tag,
            (origins[i] if i < len(origins) else None) or str(files[i].resolve()),
        )
        for i, (table, queries, tag) in enumerate(found)
    ]


def parse_run(path: str | Path, fmt: str | None = None, origin: str | None = None) -> ParsedRun:
    """Read, check and rank the run at `path`, without touching the database; `origin` is what
    the database records as its source (default: the resolved path)."""
    return parse_runs([path], fmt, [origin])[0]


def _name_of(parsed: ParsedRun, name: str | None) -> tuple[str, str | Remedy]:
    """(the run's name, where it came from)."""
    if name is not None:
        return check_run_name(name), remedy("from {}", Param("name", None))
    if parsed.tag is not None:
        return check_run_name(parsed.tag, f" (the tag of {parsed.path})"), "named by their tag"
    return check_run_name(default_run_name(parsed.path)), "named by their file name"


def _all_rows(runs: Sequence[ParsedRun], first_key: int) -> pa.Table:
    """Every run's rows with its run_key (`first_key`, then the next ones), in batches of one
    DuckDB row group each: one insert then compresses and writes several row groups at once,
    on every core, instead of one small insert per run."""
    import numpy as np
    import pyarrow as pa

    parts = [
        parsed.table.select(["qid", "doc_id", "score", "rank"]).add_column(
            0, "run_key", from_numpy(np.full(parsed.table.num_rows, key, np.int32), pa.int32())
        )
        for key, parsed in enumerate(runs, first_key)
    ]
    rows = pa.concat_tables(parts)
    return pa.Table.from_batches(rows.to_batches(max_chunksize=_ROW_GROUP), rows.schema)


def store_runs(store: Store, runs: Sequence[tuple[str, ParsedRun]]) -> list[RunIngested]:
    """Swap parsed runs into the database under their names, all in one short transaction
    (one lock, one commit): readers see every old run or every new one."""
    now, done = utcnow(), []
    with store.write(create=True) as con:
        # fetchall: a result left unfinished would stop the registrations below.
        ((last,),) = con.execute("SELECT coalesce(max(run_key), 0) FROM runs").fetchall()
        names = [name for name, _ in runs]
        old = dict(
            con.execute(
                "SELECT name, run_key FROM runs WHERE list_contains(?, name)", [names]
            ).fetchall()
        )
        rows = _all_rows([parsed for _, parsed in runs], int(last) + 1)
        # Row groups may be written in any order (each run is stored rank first within its
        # row groups, and every reader orders what it reads): both cores compress at once.
        con.execute("SET preserve_insertion_order = false")
        try:
            # In inserts of at most _INSERT_ROWS: what DuckDB holds while it compresses stays
            # bounded however many rows come at once.
            for start in range(0, rows.num_rows, _INSERT_ROWS):
                with registered(con, "_run_arrow", rows.slice(start, _INSERT_ROWS)):
                    con.execute(
                        "INSERT INTO run_rows "
                        "SELECT run_key, qid, doc_id, score, rank FROM _run_arrow"
                    )
        finally:
            # A setting of the whole DuckDB instance, reset on a connection of its own: that
            # works even when this transaction was aborted (a full disk), whose error stands.
            with con.cursor() as other:
                other.execute("RESET preserve_insertion_order")
        if old:
            con.execute(
                "DELETE FROM run_rows WHERE list_contains(?, run_key)", [list(old.values())]
            )
            con.execute("DELETE FROM runs WHERE list_contains(?, name)", [list(old)])
        for key, (name, parsed) in enumerate(runs, int(last) + 1):
            rows_in = parsed.table.num_rows
            con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [name, key, parsed.origin, parsed.format, rows_in, parsed.queries, now],
            )
            resolved = str(parsed.path.resolve())
            shown = str(parsed.path) if parsed.origin == resolved else parsed.origin
            done.append(
                RunIngested(name, shown, parsed.format, rows_in, parsed.queries, name in old)
            )
    return done


def ingest_runs(
    store: Store,
    paths: Sequence[str | Path],
    name: str | None = None,
    fmt: str | None = None,
) -> list[RunIngested]:
    """Read every run, name each, refuse a clash, then store them all in one short transaction."""
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
    parsed = parse_runs(paths, fmt)
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
    return store_runs(store, list(named.items()))


def ingest_run(
    store: Store,
    path: str | Path,
    name: str | None = None,
    fmt: str | None = None,
    origin: str | None = None,
) -> RunIngested:
    """Read the run at `path` and store it under `name` (default: its tag, else its stem);
    `origin` is what the database records as its source (default: the resolved path)."""
    parsed = parse_run(path, fmt, origin)
    return store_runs(store, [(_name_of(parsed, name)[0], parsed)])[0]
