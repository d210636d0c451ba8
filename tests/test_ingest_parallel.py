"""Runs given together are parsed on several threads, and nothing about the result shows it.

The same database row for row as one file at a time; the same refusal as a parse on one thread,
whichever thread finishes first; the text in flight bounded as before.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import InputError
from judgepool.pooling.ingest_runs import _BATCH_BYTES, _batches, _parse_all, parse_runs
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.ingest_helpers import snapshot

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def _run_text(seed: int, queries: int = 30, docs: int = 40) -> str:
    """A run with ties (scores on a coarse grid) so that the doc id order matters too."""
    rng = random.Random(seed)
    lines = []
    for q in range(queries):
        for d in rng.sample(range(docs * 3), docs):
            lines.append(f"q{q} Q0 doc{d} 0 {rng.randint(0, 9) / 4} tag{seed}")
    return "\n".join(lines) + "\n"


def _rows() -> list[tuple[str, str, str, float, int]]:
    with Store().read() as con:
        found = con.execute(
            "SELECT r.name, x.qid, x.doc_id, x.score, x.rank FROM run_rows x "
            "JOIN runs r USING (run_key) ORDER BY 1, 2, 5"
        ).fetchall()
    return [(str(n), str(q), str(d), float(s), int(k)) for n, q, d, s, k in found]


def test_many_runs_at_once_are_stored_as_one_at_a_time(
    cli: Cli, write: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [
        write(f"r{i}.trec.gz", gzip.compress(_run_text(i).encode()))
        if i % 2
        else write(f"r{i}.trec", _run_text(i))
        for i in range(9)
    ]
    sizes = [path.stat().st_size for path in files]
    assert len(_batches(sizes, 2)) >= 3  # the files really are parsed in several batches
    assert cli("ingest", "run", *map(str, files)).code == 0
    together = _rows()
    monkeypatch.setenv("JUDGEPOOL_DB", str(tmp_path / "one-by-one.duckdb"))
    for path in files:
        assert cli("ingest", "run", str(path)).code == 0
    assert _rows() == together
    assert len(together) == 9 * 30 * 40


def test_a_refusal_does_not_depend_on_which_thread_finishes_first(cli: Cli, write: Writer) -> None:
    good = [write(f"ok{i}.trec", _run_text(i)) for i in range(4)]
    assert cli("ingest", "run", str(good[0])).code == 0
    before = snapshot(Path("test.duckdb"))
    # One bad file is cheap to refuse; the other is large and fails at its last line: a parse
    # that raised whichever error came first would name the cheap one now and then.
    twice = write("twice.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    late = write("late.trec", _run_text(99, queries=200) + "q1 Q0 dx 1 abc t\n")
    for order in ([good[1], late, good[2], twice], [twice, good[1], good[2], late]):
        formats = ["trec"] * len(order)
        sizes = [path.stat().st_size for path in order]
        assert len(_batches(sizes, 2)) > 1
        with pytest.raises(InputError) as alone:
            _parse_all(order, formats, sizes, workers=1)
        for _ in range(3):
            with pytest.raises(InputError) as threaded:
                _parse_all(order, formats, sizes, workers=2)
            assert str(threaded.value) == str(alone.value)
        first_bad = next(path for path in order if path in (twice, late))
        assert str(first_bad) in str(alone.value)
        done = cli("ingest", "run", *map(str, order))
        assert done.code != 0
        assert str(first_bad) in done.err.splitlines()[0]
        assert snapshot(Path("test.duckdb")) == before  # nothing of the good files either


def test_the_text_in_flight_stays_bounded() -> None:
    large = _BATCH_BYTES // 2 + 1
    assert _batches([large] * 3, 2) == [[0], [1], [2]]  # more than a worker's share: alone
    small = [1 << 20] * 16
    batches = _batches(small, 2)
    assert sorted(i for batch in batches for i in batch) == list(range(16))
    assert len(batches) == 4  # about two batches per worker
    assert all(sum(small[i] for i in batch) <= _BATCH_BYTES // 2 for batch in batches)
    near = [int(_BATCH_BYTES // 2 * 0.9)] * 10  # two of these would pass a worker's share
    assert _batches(near, 2) == [[i] for i in range(10)]


def test_parsing_on_threads_gives_the_parse_of_one_thread(write: Writer) -> None:
    files = [write(f"p{i}.trec", _run_text(i, queries=5, docs=7)) for i in range(7)]
    together = parse_runs(files)
    alone = [parse_runs([path])[0] for path in files]
    assert [run.table.to_pylist() for run in together] == [run.table.to_pylist() for run in alone]
    assert [(run.queries, run.tag) for run in together] == [(r.queries, r.tag) for r in alone]


def test_scratch_connections_share_nothing_but_the_engine() -> None:
    """Parallel parses each get a scratch connection of one in-memory DuckDB: the same names
    registered or made TEMP on two of them at once do not meet, and nothing outlives its
    connection."""
    import threading

    import pyarrow as pa

    from judgepool.pooling.store.sql import registered, scratch

    seen: dict[int, list[int]] = {}
    both = threading.Barrier(2)

    def use(value: int) -> None:
        with scratch() as con, registered(con, "_rows", pa.table({"x": [value] * 3})):
            con.execute("CREATE TEMP TABLE _made AS SELECT x * 10 AS y FROM _rows")
            both.wait(timeout=30)  # both connections hold their tables now
            seen[value] = [int(y) for (y,) in con.execute("SELECT y FROM _made").fetchall()]

    workers = [threading.Thread(target=use, args=(v,)) for v in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert seen == {1: [10, 10, 10], 2: [20, 20, 20]}
    with scratch() as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]
