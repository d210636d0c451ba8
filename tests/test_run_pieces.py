"""A large run parsed in pieces, one per core, gives what one parse of the whole file gives, and
every file the pieces cannot take alike goes back to the whole file's parse."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from judgepool.pooling.io.fastscan import query_pieces, scan_run
from judgepool.pooling.run_order import rank_runs
from judgepool.pooling.run_pieces import parse_in_pieces

Writer = Callable[[str, str | bytes], Path]


def _lines(
    qids: list[str], docs: int, seed: int, tag: str = "sys", prefix: str = "doc"
) -> list[str]:
    """Each query's docs with ties (scores on a coarse grid, and float32 ties 1e-9 apart)."""
    rng = random.Random(seed)
    lines = []
    for qid in qids:
        for d in rng.sample(range(docs * 3), docs):
            score = rng.randint(0, 9) / 4 + (1e-9 if d % 7 == 0 else 0.0)
            lines.append(f"{qid} Q0 {prefix}{d} 0 {score} {tag}")
    return lines


def _as_rows(table: pa.Table) -> list[tuple[str, str, float, int]]:
    """The rows as values, in (qid, rank) order: the pieces' order differs from the whole's."""
    rows = pa.table(
        {
            "qid": pc.cast(table.column("qid"), pa.string()),
            "doc_id": table.column("doc_id"),
            "score": table.column("score"),
            "rank": table.column("rank"),
        }
    ).sort_by([("qid", "ascending"), ("rank", "ascending")])
    return [tuple(row.values()) for row in rows.to_pylist()]  # type: ignore[misc]


def _whole(path: Path) -> tuple[list[tuple[str, str, float, int]], int, str | None]:
    scanned = scan_run(path)
    assert scanned is not None
    (ranked,), twice = rank_runs([scanned[0]])
    assert twice == []
    return _as_rows(ranked.table), ranked.queries, scanned[1]


@pytest.mark.parametrize("count", [2, 3, 5])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_the_pieces_give_the_whole_files_ranking(write: Writer, count: int, ending: str) -> None:
    qids = [f"q{i}" for i in random.Random(1).sample(range(100), 40)]  # not in qid order
    path = write("run.trec", ending.join(_lines(qids, 60, seed=count)) + ending)
    spans = query_pieces(path, count)
    assert spans is not None and len(spans) == count  # really cut
    pieces = parse_in_pieces(path, count)
    assert pieces is not None
    table, queries, tag = pieces
    assert (_as_rows(table), queries, tag) == _whole(path)


def test_a_query_that_comes_back_in_another_piece_sends_the_file_back(write: Writer) -> None:
    # q1, q2, then q1 again with other docs (no pair listed twice): the cut falls where q2 ends
    lines = _lines(["q1"], 100, 1) + _lines(["q2"], 100, 2) + _lines(["q1"], 100, 3, prefix="x")
    path = write("run.trec", "\n".join(lines) + "\n")
    assert query_pieces(path, 2) is not None
    assert parse_in_pieces(path, 2) is None
    assert _whole(path)[1] == 2  # the whole file ranks q1's 200 docs together


@pytest.mark.parametrize(
    "odd",
    [
        "q30 Q0 doc1 0 1.5 sys\nq30 Q0 doc1 0 0.5 sys",  # a pair listed twice
        "# a comment",  # what the fast path leaves to the exact reader
        "q30 Q0 doc9 0 NaN sys",
    ],
)
def test_a_piece_the_fast_path_refuses_sends_the_file_back(write: Writer, odd: str) -> None:
    lines = _lines([f"q{i}" for i in range(30)], 50, 4)
    path = write("run.trec", "\n".join(lines) + "\n" + odd + "\n")
    assert query_pieces(path, 2) is not None
    assert parse_in_pieces(path, 2) is None


def test_tags_are_the_pieces_when_they_agree(write: Writer) -> None:
    same = write("same.trec", "\n".join(_lines([f"q{i}" for i in range(20)], 30, 5)) + "\n")
    mixed_lines = _lines([f"q{i}" for i in range(10)], 30, 6, "a")
    mixed_lines += _lines([f"q{i}" for i in range(10, 20)], 30, 7, "b")
    mixed = write("mixed.trec", "\n".join(mixed_lines) + "\n")
    assert parse_in_pieces(same, 2) is not None
    assert parse_in_pieces(same, 2)[2] == "sys"  # type: ignore[index]
    found = parse_in_pieces(mixed, 2)
    assert found is not None and found[2] is None and found[2] == _whole(mixed)[2]


def test_no_pieces_where_a_cut_is_not_clear(write: Writer) -> None:
    lines = _lines(["q1", "q2", "q3"], 500, 8)
    plain = write("long-queries.trec", "\n".join(lines) + "\n")
    assert query_pieces(plain, 2, reach=256) is None  # no new query within reach of the cut
    assert query_pieces(plain, 2) is not None
    assert parse_in_pieces(plain, 1) is None  # one piece is the whole file's parse
    packed = write("run.trec.gz", gzip.compress(plain.read_bytes()))
    assert query_pieces(packed, 2) is None  # no cut without reading the whole stream
    tabs = write(
        "tabs.trec", "\n".join(lines[:1000] + [x.replace(" ", "\t") for x in lines[1000:]])
    )
    assert query_pieces(tabs, 2) is None  # the new query's line has another separator


def _big_run(queries: int, docs: int) -> list[str]:
    """A run over the size at which an ingest parses it in pieces (pooling.ingest_runs)."""
    rng = random.Random(9)
    return [
        f"q{q:05d} Q0 doc-{q}-{d}-{'p' * 8} {d + 1} {rng.randint(0, 999) / 8} big"
        for q in range(queries)
        for d in range(docs)
    ]


@pytest.mark.slow
def test_a_large_run_is_stored_as_its_whole_ranking(
    cli: Callable[..., Any], write: Writer, tmp_path: Path
) -> None:
    from judgepool.pooling.ingest_runs import _PIECE_BYTES
    from judgepool.pooling.store.connection import Store

    path = write("big.trec", "\n".join(_big_run(900, 1000)) + "\n")
    assert path.stat().st_size >= _PIECE_BYTES  # parsed in pieces
    assert cli("ingest", "run", str(path)).code == 0
    with Store().read() as con:
        stored = con.sql(
            "SELECT qid, doc_id, score, rank FROM run_rows ORDER BY qid, rank"
        ).to_arrow_table()
        (queries,) = con.execute("SELECT n_queries FROM runs").fetchone() or (0,)
    scanned = scan_run(path)
    assert scanned is not None
    (whole,), _ = rank_runs([scanned[0]])
    expected = pa.table(
        {
            "qid": pc.cast(whole.table.column("qid"), pa.string()),
            "doc_id": whole.table.column("doc_id"),
            "score": whole.table.column("score"),
            "rank": whole.table.column("rank"),
        }
    ).sort_by([("qid", "ascending"), ("rank", "ascending")])
    assert stored.cast(expected.schema).equals(expected)
    assert queries == whole.queries == 900


@pytest.mark.slow
def test_a_pair_listed_twice_in_a_later_piece_is_refused_naming_both_lines(
    cli: Callable[..., Any], write: Writer
) -> None:
    lines = _big_run(900, 1000)
    second = 800 * 1000 + 5  # in the last query's block, far into the second piece
    lines.insert(second + 1, lines[second].rsplit(" ", 2)[0] + " 0.5 big")  # its doc again
    path = write("big.trec", "\n".join(lines) + "\n")
    result = cli("ingest", "run", str(path))
    assert result.code != 0
    assert f"line {second + 2}" in result.err and f"first on line {second + 1}" in result.err
