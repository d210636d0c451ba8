"""trec_eval's order for runs just read: one integer sort ranks a batch of runs.

trec_eval orders a query's docs by score as a C float (32 bits: two scores equal in single
precision are a tie) descending, then by doc id descending, byte-wise. Here every row of a batch
of runs gets one 64-bit key, (run, query) in the high half and the float32 score's bits, mapped
to descending unsigned order, in the low half; one stable sort of those keys orders the batch
(a run written in query and score order is already nearly sorted, which the sort exploits).
Only the rows whose key ties (equal float32 scores in one query) are then sorted by doc id
descending, so the strings are compared only where trec_eval compares them. A row's rank is its
place in its query's block. Each run's rows come out in (rank, qid) order, queries by their ids
byte-wise: the database stores them so, and a pool or a measure at depth k then reads only the
first row groups of a run (DuckDB skips those whose ranks all exceed k; the rank column, long
runs of one value, compresses to almost nothing).

A pair listed twice is found by hashing (run, qid, doc id) in DuckDB (both cores, no sort of the
strings); equal hashes are then compared as strings, so a collision never refuses a good run.

Arrow arrays become numpy arrays through their buffers: Arrow's own `to_numpy` and `pa.array`
import pandas (a second of start-up) to look for its types.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray


@dataclass(frozen=True)
class Ranked:
    """One run in trec_eval's order."""

    # qid (dictionary-encoded), doc_id, score (the double the file gave), rank (1-based), in
    # (rank, qid) order
    table: pa.Table
    queries: int


def to_numpy(array: pa.Array | pa.ChunkedArray, dtype: Any) -> NDArray[Any]:
    """A primitive Arrow array without nulls as numpy (booleans as bools), read off its buffer."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_boolean(array.type):
        return to_numpy(pc.cast(array, pa.uint8()), np.uint8).astype(bool)
    data = np.frombuffer(array.buffers()[1], dtype=dtype, count=array.offset + len(array))
    return data[array.offset :]


def from_numpy(values: NDArray[Any], kind: pa.DataType) -> pa.Array:
    """A numpy array of a primitive type as an Arrow array over the same memory."""
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def _query_blocks(file: NDArray[Any], encoded: pa.DictionaryArray) -> NDArray[Any]:
    """Each row's (run, query) block number, in (run, qid byte-wise ascending) order, from the
    qids dictionary-encoded."""
    import numpy as np
    import pyarrow.compute as pc

    names = encoded.dictionary
    place = np.empty(len(names), dtype=np.int64)
    place[to_numpy(pc.sort_indices(names), np.uint64).astype(np.int64)] = np.arange(len(names))
    codes = to_numpy(encoded.indices, np.int32)
    block: NDArray[Any] = file.astype(np.int64) * max(len(names), 1) + place[codes]
    if len(block) and int(block.max()) >= 1 << 32:  # too many (run, query) pairs for 32 bits
        block = np.unique(block, return_inverse=True)[1].reshape(-1)
    return block.astype(np.uint64)


def _descending_bits(score: NDArray[Any]) -> NDArray[Any]:
    """The scores as float32, mapped to unsigned integers whose ascending order is the floats'
    descending order; equal floats (-0.0 and 0.0 too) get equal integers."""
    import numpy as np

    with np.errstate(over="ignore"):  # beyond the float range: an infinity, as C converts
        as_float = score.astype(np.float32) + np.float32(0.0)  # -0.0 + 0.0 is 0.0
    bits = as_float.view(np.uint32)
    ascending = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(1 << 31))
    return (~ascending).astype(np.uint64)


def _break_ties(order: NDArray[Any], keys: NDArray[Any], doc: pa.Array) -> None:
    """Within each run of equal keys in `order`, put the rows in doc id descending order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    same = keys[1:] == keys[:-1]
    if not same.any():
        return
    tied = np.zeros(len(keys), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    where = np.flatnonzero(tied)
    group = np.cumsum(~np.concatenate(([False], same))[where])
    rows = order[where]
    by_doc = pc.sort_indices(
        pa.table(
            {
                "group": from_numpy(group, pa.int64()),
                "doc": pc.take(doc, from_numpy(rows, pa.int64())),
            }
        ),
        sort_keys=[("group", "ascending"), ("doc", "descending")],
    )
    order[where] = rows[to_numpy(by_doc, np.uint64).astype(np.int64)]


def _listed_twice(rows: pa.Table) -> list[int]:
    """The runs (their `file` numbers) that list a (qid, doc_id) pair twice."""
    import numpy as np

    from judgepool.pooling.store.sql import registered, scratch

    with scratch() as con, registered(con, "_ranked_rows", rows):
        hashes = con.sql("SELECT hash(file, qid, doc_id) AS h FROM _ranked_rows").to_arrow_table()
        values = np.sort(to_numpy(hashes.column("h"), np.uint64))
        equal = values[1:][values[1:] == values[:-1]]
        if not len(equal):
            return []
        # Equal hashes: compare the strings themselves (a collision is not a duplicate).
        found = con.execute(
            "SELECT DISTINCT file FROM _ranked_rows WHERE hash(file, qid, doc_id) IN "
            "(SELECT unnest(?::UBIGINT[])) GROUP BY file, qid, doc_id HAVING count(*) > 1",
            [[int(h) for h in np.unique(equal)]],
        ).fetchall()
    return sorted(int(f) for (f,) in found)


def _rank_major(rank: NDArray[Any], bounds: NDArray[Any]) -> NDArray[Any]:
    """The permutation that puts each run's rows (`bounds[i]:bounds[i+1]`, in (qid, rank)
    order) in (rank, qid) order: a stable sort of the ranks alone, within each run."""
    import numpy as np

    parts = []
    for start, end in itertools.pairwise(bounds):
        ranks = rank[start:end]
        # Ranks below 2**16 sort as 16-bit integers: numpy's stable sort is then a radix sort.
        if len(ranks) and int(ranks.max()) < 1 << 16:
            ranks = ranks.astype(np.uint16)
        parts.append(np.argsort(ranks, kind="stable") + start)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def rank_runs(tables: Sequence[pa.Table]) -> tuple[list[Ranked], list[int]]:
    """Each run (qid, doc_id, score) ranked, and the runs that list a pair twice (by index;
    their ranking means nothing: the caller refuses them)."""
    import numpy as np
    import pyarrow as pa

    schema = pa.schema([("qid", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())])
    parts = []
    for i, table in enumerate(tables):
        number = from_numpy(np.full(table.num_rows, i, dtype=np.int32), pa.int32())
        parts.append(table.select(schema.names).cast(schema).append_column("file", number))
    rows = pa.concat_tables(parts).combine_chunks()
    # The pairs are hashed by DuckDB on a second thread while numpy ranks on this one (both let
    # the other run): a batch alone on the machine then uses two cores.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgepool-pairs") as side:
        twice = side.submit(_listed_twice, rows)
        ranked = _ranked(rows, len(tables))
    return ranked, twice.result()


def _ranked(rows: pa.Table, runs: int) -> list[Ranked]:
    """Each of the `runs` runs in `rows` (qid, doc_id, score, file), ranked."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = rows.num_rows
    # The qids, a few hundred values over up to millions of rows, stay dictionary-encoded:
    # a quarter of the memory of the strings, and the reordering below moves integers.
    qid = pc.dictionary_encode(rows.column("qid").combine_chunks())
    block = _query_blocks(to_numpy(rows.column("file"), np.int32), qid)
    score = to_numpy(rows.column("score"), np.float64)
    keys = (block << np.uint64(32)) | _descending_bits(score)
    order = np.argsort(keys, kind="stable")
    _break_ties(order, keys[order], rows.column("doc_id").combine_chunks())
    in_order = block[order]
    new_block = np.concatenate(([n > 0], in_order[1:] != in_order[:-1]))
    starts = np.flatnonzero(new_block)
    lengths = np.diff(np.append(starts, n))
    rank = (np.arange(1, n + 1) - np.repeat(starts, lengths)).astype(np.int32)
    file = to_numpy(rows.column("file"), np.int32)[order]
    bounds = np.searchsorted(file, np.arange(runs + 1))
    queries = np.diff(np.searchsorted(starts, bounds))
    by_rank = _rank_major(rank, bounds)
    order, rank = order[by_rank], rank[by_rank]
    taken = from_numpy(order.astype(np.int64), pa.int64())
    ordered = pa.Table.from_arrays(
        [
            pc.take(qid, taken),
            pc.take(rows.column("doc_id"), taken),
            from_numpy(score[order], pa.float64()),
            from_numpy(rank, pa.int32()),
        ],
        names=["qid", "doc_id", "score", "rank"],
    )
    return [
        Ranked(ordered.slice(int(a), int(b - a)), int(q))
        for a, b, q in zip(bounds[:-1], bounds[1:], queries, strict=True)
    ]
