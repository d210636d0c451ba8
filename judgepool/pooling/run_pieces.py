"""One large run parsed and ranked in pieces, one per core, instead of on one core.

A run file alone in its batch (pooling/ingest_runs.py) kept one core busy and the other mostly
idle: Arrow's reader is parallel, but the byte checks, the ranking and most of the numpy work are
not. Cut where a new query starts, the pieces are independent: trec_eval ranks each query on its
own, and a pair listed twice lies within one query. So each piece is read, checked and ranked on
a thread of its own, and the pieces' rows are the run's (measured on a 2M-row run, 78 MB, on two
cores: 0.53-0.58 s instead of 0.71-1.27 s).

Only what the whole file's fast path would accept is taken this way; in every other case (a
piece the fast path refuses, a pair listed twice, a query that comes back in another piece) the
caller parses the whole file as before, so errors and their line numbers are the same. The run's
tag is the pieces' when they all have the same one, as for the whole file. The run's rows come
piece by piece, each piece in (rank, qid) order: a depth-k read still finds the top ranks in the
first row groups of each piece.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.io.fastscan import query_pieces, scan_run
from judgepool.pooling.run_order import Ranked, rank_runs

if TYPE_CHECKING:
    import pyarrow as pa


def _piece(path: Path, span: tuple[int, int]) -> tuple[Ranked, str | None] | None:
    """One piece read, checked and ranked; None when the whole file must be parsed instead."""
    scanned = scan_run(path, span)
    if scanned is None:
        return None
    table, tag = scanned
    (ranked,), twice = rank_runs([table])
    return None if twice else (ranked, tag)


def _queries(ranked: Ranked) -> set[str]:
    """The piece's query ids: its qid column is dictionary-encoded with exactly those."""
    column = ranked.table.column("qid")
    return {str(q) for chunk in column.chunks for q in chunk.dictionary.to_pylist()}


def parse_in_pieces(path: Path, count: int) -> tuple[pa.Table, int, str | None] | None:
    """The run at `path` (not compressed) read, checked and ranked in `count` pieces on as many
    threads: (table, queries, tag) as one parse of the whole file gives them (the rows in piece
    order), or None when the whole file must be parsed instead."""
    import pyarrow as pa

    spans = query_pieces(path, count) if count > 1 else None  # one piece is the whole file
    if spans is None:
        return None
    with ThreadPoolExecutor(
        max_workers=len(spans) - 1, thread_name_prefix="judgepool-piece"
    ) as pool:
        later = [pool.submit(_piece, path, span) for span in spans[1:]]
        pieces = [_piece(path, spans[0]), *(future.result() for future in later)]
    if any(piece is None for piece in pieces):
        return None
    done = [piece for piece in pieces if piece is not None]
    tags = {tag for _, tag in done}
    seen: set[str] = set()
    for ranked, _ in done:
        queries = _queries(ranked)
        if queries & seen:  # a query in two pieces: ranked apart, it would be ranked wrong
            return None
        seen |= queries
    table = pa.concat_tables([ranked.table for ranked, _ in done])
    return table, sum(ranked.queries for ranked, _ in done), tags.pop() if len(tags) == 1 else None
