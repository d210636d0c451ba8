"""The database file: migrations, refusal of newer schemas, and sharing it between processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import DatabaseBusyError, DatabaseError
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION

Writer = Callable[[str, str | bytes], Path]
REPO = Path(__file__).resolve().parent.parent


def python(code: str, *args: str) -> subprocess.Popen[str]:
    """A child Python process running `code` with the repository importable."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_new_database_records_every_named_migration(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.duckdb")
    with store.write(create=True) as con:
        applied = con.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
    assert applied == [(m.version, m.name) for m in MIGRATIONS]
    assert store.schema_version() == SCHEMA_VERSION


def test_a_database_from_a_newer_judgepool_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "future.duckdb")
    with store.write(create=True) as con:
        con.execute("INSERT INTO schema_migrations VALUES (999, 'from_the_future', now())")
    with pytest.raises(DatabaseError, match="schema version 999, newer than"), store.write():
        pass


def test_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.duckdb")
    with pytest.raises(RuntimeError), store.write(create=True) as con:
        con.execute("INSERT INTO queries VALUES ('q1', 'x', NULL, now())")
        raise RuntimeError("crash in the middle")
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM queries").fetchone() == (0,)


def test_busy_database_waits_then_says_who_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "busy.duckdb"
    with Store(db).write(create=True):
        pass
    holder = python(
        """
        import sys, time, duckdb
        con = duckdb.connect(sys.argv[1])
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
        con.close()
        """,
        str(db),
        "30",
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        monkeypatch.setenv("JUDGEPOOL_LOCK_TIMEOUT", "0.5")
        started = time.monotonic()
        with pytest.raises(DatabaseBusyError, match="held by another process"), Store(db).read():
            pass
        assert time.monotonic() - started >= 0.5
    finally:
        holder.kill()
        holder.communicate()


def test_a_brief_holder_is_waited_for(tmp_path: Path) -> None:
    db = tmp_path / "brief.duckdb"
    with Store(db).write(create=True):
        pass
    holder = python(
        """
        import sys, time, duckdb
        con = duckdb.connect(sys.argv[1])
        print("holding", flush=True)
        time.sleep(0.7)
        con.close()
        """,
        str(db),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with Store(db).read() as con:  # retries until the holder lets go
            assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    finally:
        holder.communicate(timeout=30)


def test_readers_in_another_process_never_see_a_half_written_run(
    tmp_path: Path, write: Writer
) -> None:
    """Re-ingest a run again and again while another process keeps reading it."""
    db = tmp_path / "swap.duckdb"
    store = Store(db)
    small = "".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(300))
    large = "".join(f"q{i} Q0 d{i}-{j} {j} {-j} t\n" for i in range(300) for j in range(1, 21))
    paths = [write("small.trec", small), write("large.trec", large)]
    ingest_run(store, paths[0], name="swap")
    stop = tmp_path / "stop"
    reader = python(
        """
        import os, sys, time
        from judgepool.pooling.store.connection import Store
        store, seen, reads = Store(sys.argv[1]), set(), 0
        print("reading", flush=True)
        while not os.path.exists(sys.argv[2]) or reads < 20:
            with store.read() as con:
                declared, actual, queries = con.execute(
                    "SELECT r.n_rows, count(x.qid), count(DISTINCT x.qid) FROM runs r "
                    "LEFT JOIN run_rows x USING (run_key) WHERE r.name = 'swap' GROUP BY r.n_rows"
                ).fetchone()
            seen.add((declared, actual, queries))
            reads += 1
            time.sleep(0.005)
        print(sorted(seen))
        """,
        str(db),
        str(stop),
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
        for n in range(8):
            ingest_run(store, paths[(n + 1) % 2], name="swap")
            time.sleep(0.05)
        stop.touch()
        out, err = reader.communicate(timeout=90)
    finally:
        reader.kill()
        reader.communicate()
    assert reader.returncode == 0, err
    seen = eval(out.strip())  # a printed list of tuples
    assert set(seen) <= {(300, 300, 300), (6000, 6000, 300)}, seen
    assert len(seen) == 2, "the reader should have seen both versions of the run"


def test_help_imports_no_heavy_library() -> None:
    child = python(
        """
        import sys
        from judgepool.ui.cli import main
        try:
            main(["--help"])
        except SystemExit:
            pass
        heavy = {"duckdb", "numpy", "pyarrow", "litellm", "torch", "streamlit",
                 "sentence_transformers", "pandas", "scipy"}
        print(sorted(heavy & set(sys.modules)))
        """
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.strip().splitlines()[-1] == "[]"
