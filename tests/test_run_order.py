"""Runs ranked together in one batch rank exactly as each alone, in trec_eval's order.

pooling/run_order.py sorts every run of a batch at once (the ingest of many small runs shares
one sort); these tests hold that a run's ranking never depends on its neighbours in the batch:
float32 ties broken by doc id descending byte-wise, pairs shared between runs not taken for
pairs listed twice, and a pair listed twice named by the run that lists it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from judgepool.pooling.run_order import rank_runs
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

Row = tuple[str, str, float]


def trec_eval_order(rows: list[Row]) -> list[tuple[str, str, int]]:
    """(qid, doc_id, rank) as trec_eval ranks: score as a C float descending, doc id descending."""
    out: list[tuple[str, str, int]] = []
    for qid in sorted({q for q, _, _ in rows}):
        docs = [(d, s) for q, d, s in rows if q == qid]
        # Doc id descending by UTF-8 bytes, then a stable sort on the float32 score.
        docs.sort(key=lambda item: item[0].encode(), reverse=True)
        with np.errstate(over="ignore"):
            docs.sort(key=lambda item: -float(np.float32(item[1])))
        out += [(qid, d, i + 1) for i, (d, _) in enumerate(docs)]
    return out


def random_run(rng: random.Random, queries: int) -> list[Row]:
    """Scores drawn from a few values that are equal as floats but not as doubles."""
    values = [0.1, 0.10000000001, 0.3, 0.30000000002, -0.0, 0.0, 3.5e38, float("inf"), 2.0]
    rows = []
    for q in range(queries):
        docs = rng.sample(["a", "b", "z", "\u00e9", "B", "a1", "aa", "\u4e00"], rng.randint(1, 8))
        rows += [(f"q{q}", d, rng.choice(values)) for d in docs]
    rng.shuffle(rows)
    return rows


def table(rows: list[Row]) -> pa.Table:
    qids, docs, scores = zip(*rows, strict=True)
    return pa.table(
        {
            "qid": pa.array(qids, pa.string()),
            "doc_id": pa.array(docs, pa.string()),
            "score": pa.array(scores, pa.float64()),
        }
    )


def test_each_run_of_a_batch_ranks_as_trec_eval_and_as_alone() -> None:
    rng = random.Random(7)
    runs = [random_run(rng, rng.randint(1, 6)) for _ in range(12)]
    ranked, twice = rank_runs([table(rows) for rows in runs])
    assert twice == []
    for rows, run in zip(runs, ranked, strict=True):
        got = list(
            zip(
                run.table.column("qid").to_pylist(),
                run.table.column("doc_id").to_pylist(),
                run.table.column("rank").to_pylist(),
                strict=True,
            )
        )
        # Rows come in (rank, qid) order, the order the database stores them in.
        assert got == sorted(got, key=lambda row: (row[2], row[0].encode()))
        assert sorted(got, key=lambda row: (row[0].encode(), row[2])) == trec_eval_order(rows)
        assert run.queries == len({q for q, _, _ in rows})
        alone, _ = rank_runs([table(rows)])
        # The same rows (the qids' dictionary is the batch's, so compare the values).
        assert alone[0].table.to_pylist() == run.table.to_pylist()
        # The score kept is the double the file gave, not its float32.
        by_pair = {(q, d): s for q, d, s in rows}
        kept = run.table.column("score").to_pylist()
        assert [by_pair[(q, d)] for q, d, _ in got] == kept


def test_a_pair_listed_twice_names_its_run_only() -> None:
    shared = [("q1", "a", 1.0), ("q1", "b", 0.5)]
    twice = [*shared, ("q2", "a", 1.0), ("q2", "a", 0.2)]
    # The last row of one run and the first of the next are the same pair: not a repeat.
    _, found = rank_runs([table(shared), table(shared[::-1]), table(twice), table(shared)])
    assert found == [2]


def test_many_runs_in_one_command_rank_as_one_at_a_time(cli: Cli, write: Writer) -> None:
    rng = random.Random(11)
    runs = [random_run(rng, 4) for _ in range(5)]
    paths = [
        write(f"r{i}.trec", "".join(f"{q} Q0 {d} 0 {s!r} t{i}\n" for q, d, s in rows))
        for i, rows in enumerate(runs)
    ]
    result = cli("ingest", "run", *map(str, paths))
    assert result.code == 0, result.output
    with Store().read() as con:
        for i, rows in enumerate(runs):
            found = con.execute(
                "SELECT qid, doc_id, rank FROM run_rows JOIN runs USING (run_key) "
                "WHERE name = ? ORDER BY qid, rank",
                [f"t{i}"],
            ).fetchall()
            assert [(str(q), str(d), int(r)) for q, d, r in found] == trec_eval_order(rows)


def test_runs_are_stored_rank_first_so_a_depth_cut_reads_few_row_groups(
    cli: Cli, write: Writer
) -> None:
    # 300 queries x 500 docs: 150,000 rows, more than one DuckDB row group.
    lines = [f"q{q:03d} Q0 d{q}-{d} {d} {1000 - d} t\n" for q in range(300) for d in range(500)]
    result = cli("ingest", "run", str(write("t.trec", "".join(lines))))
    assert result.code == 0, result.output
    with Store().read() as con:
        ranks = [int(r) for (r,) in con.execute("SELECT rank FROM run_rows").fetchall()]
        assert ranks == sorted(ranks)
        # The rows of depth 10 lie in the first row group (122,880 rows) alone.
        (last,) = con.execute("SELECT max(rowid) FROM run_rows WHERE rank <= 10").fetchone() or (0,)
        assert int(last) == 300 * 10 - 1
