"""trec_eval's order for runs just read: one sort ranks a batch of runs and finds repeated pairs.

trec_eval orders a query's docs by score as a C float (32 bits: two scores equal in single
precision are a tie) descending, then by doc id descending, byte-wise. Here the rows of every run
of a batch are sorted once by (run, query, doc id descending) with Arrow's sort on the strings;
in that order a pair listed twice sits next to itself, and a stable sort of plain numbers
(query block, float32 score descending) then gives trec_eval's order, the doc id order carried
along. A row's rank is its place in its query's block. The rows come out in (qid, rank) order,
which the database stores in half the space.

Arrow arrays become numpy arrays through their buffers: Arrow's own `to_numpy` and `pa.array`
import pandas (a second of start-up) to look for its types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray


@dataclass(frozen=True)
class Ranked:
    """One run in trec_eval's order."""

    table: pa.Table  # qid, doc_id, score (the double the file gave), rank (1-based)
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


def rank_runs(tables: Sequence[pa.Table]) -> tuple[list[Ranked], list[int]]:
    """Each run (qid, doc_id, score) ranked, and the runs that list a pair twice (by index;
    their ranking means nothing: the caller refuses them)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = pa.schema([("qid", pa.string()), ("doc_id", pa.string()), ("score", pa.float64())])
    parts = []
    for i, table in enumerate(tables):
        number = from_numpy(np.full(table.num_rows, i, dtype=np.int32), pa.int32())
        parts.append(table.select(schema.names).cast(schema).append_column("file", number))
    rows = pa.concat_tables(parts).combine_chunks()
    n = rows.num_rows
    by_doc = to_numpy(
        pc.sort_indices(
            rows,
            sort_keys=[("file", "ascending"), ("qid", "ascending"), ("doc_id", "descending")],
        ),
        np.uint64,
    ).astype(np.int64)
    taken = from_numpy(by_doc, pa.int64())
    file = to_numpy(rows.column("file"), np.int32)[by_doc]
    qid = pc.take(rows.column("qid"), taken)
    doc = pc.take(rows.column("doc_id"), taken)
    new_block = (file[1:] != file[:-1]) | to_numpy(pc.not_equal(qid[1:], qid[:-1]), bool)
    twice = ~new_block & to_numpy(pc.equal(doc[1:], doc[:-1]), bool)
    duplicates = sorted({int(f) for f in file[1:][twice]})
    block = np.concatenate(([0], np.cumsum(new_block)))
    score = to_numpy(rows.column("score"), np.float64)[by_doc]
    with np.errstate(over="ignore"):  # beyond the float range: an infinity, as C converts
        as_float = score.astype(np.float32)
    # Stable: within a block and a score, the doc ids stay in their descending order.
    by_score = np.lexsort((-as_float, block))
    starts = np.flatnonzero(np.concatenate(([True], new_block)))
    lengths = np.diff(np.append(starts, n))
    rank = (np.arange(1, n + 1) - np.repeat(starts, lengths)).astype(np.int32)
    ordered = pa.Table.from_arrays(
        [
            pc.take(qid, from_numpy(by_score, pa.int64())),
            pc.take(doc, from_numpy(by_score, pa.int64())),
            from_numpy(score[by_score], pa.float64()),
            from_numpy(rank, pa.int32()),
        ],
        names=["qid", "doc_id", "score", "rank"],
    )
    bounds = np.searchsorted(file, np.arange(len(tables) + 1))
    queries = np.diff(np.searchsorted(starts, bounds))
    ranked = [
        Ranked(ordered.slice(int(a), int(b - a)), int(q))
        for a, b, q in zip(bounds[:-1], bounds[1:], queries, strict=True)
    ]
    return ranked, duplicates
