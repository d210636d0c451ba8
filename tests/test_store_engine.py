"""The open path: each process attaches its database files to one in-memory DuckDB instance.

Creating a DuckDB instance (what `duckdb.connect(file)` does) costs about 17 ms of CPU, building
DuckDB's catalog of built-in functions; attaching a file to a live one about 2 ms. Every command
opens the file once or more, and a judge once per flush. These tests hold what the cheap path
must keep of the old one: a file of its own per database (its tables, its schema version),
the lock released after each use, spill files beside the file, a forked child's use.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from judgepool.errors import DatabaseError
from judgepool.pooling.store.connection import Store


def _query(store: Store, qid: str) -> Store:
    with store.write(create=True) as con:
        con.execute("INSERT INTO queries VALUES (?, 'text', NULL, now())", [qid])
    return store


def test_opening_a_file_again_creates_no_duckdb_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _query(Store(tmp_path / "a.duckdb"), "q1")
    made: list[object] = []
    connect = duckdb.connect

    def counting(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        made.append(args)
        return connect(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", counting)
    for _ in range(5):
        with store.read() as con:
            assert con.execute("SELECT qid FROM queries").fetchall() == [("q1",)]
        with store.write() as con:
            con.execute("SELECT count(*) FROM judgments").fetchall()
    assert made == []


def test_files_open_together_each_see_only_their_own_tables(tmp_path: Path) -> None:
    ours = _query(Store(tmp_path / "ours.duckdb"), "q1")
    other = _query(Store(tmp_path / "other.duckdb"), "q2")
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE orders (id INTEGER)")
    con.close()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with ours.read() as a, other.write() as b:
        assert a.execute("SELECT qid FROM queries").fetchall() == [("q1",)]
        assert b.execute("SELECT qid FROM queries").fetchall() == [("q2",)]
        # the schema checks look at the file asked for, not at the others open in the process
        with pytest.raises(DatabaseError, match="not a judgepool database"), Store(foreign).read():
            pass
        empty_read = pytest.raises(DatabaseError, match="is empty: nothing has been ingested")
        with empty_read, Store(empty).read():
            pass
        with Store(empty).write(create=True) as c:
            assert c.execute("SELECT count(*) FROM queries").fetchone() == (0,)
    assert Store(empty).schema_version() == ours.schema_version()


def test_the_file_is_free_for_another_process_after_each_use(tmp_path: Path) -> None:
    store = _query(Store(tmp_path / "it's.duckdb"), "q1")  # a quote in the path, too
    with store.read() as con:
        assert con.execute("SELECT current_setting('temp_directory')").fetchone() == (
            f"{store.path}.tmp",  # sorts larger than memory spill beside the file, as before
        )
    code = "import duckdb, sys; duckdb.connect(sys.argv[1]).execute('SELECT 1'); print('opened')"
    done = subprocess.run(
        [sys.executable, "-c", code, str(store.path)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout == "opened\n", done.stderr
    assert not Path(f"{store.path}.wal").exists()  # checkpointed as a closed connection is


def _write_in_child(path: str, out: Any) -> None:
    _query(Store(path), "q2")
    with Store(path).read() as con:
        out.put(con.execute("SELECT qid FROM queries ORDER BY qid").fetchall())


def test_a_forked_child_writes_and_reads_the_file(tmp_path: Path) -> None:
    """A child forked after the parent's instance exists works through the one it inherits.
    (Forking while a file is open is another matter: DuckDB's own record of open files is
    inherited, and the child cannot open that file; nor could it before.)"""
    store = _query(Store(tmp_path / "a.duckdb"), "q1")
    fork = multiprocessing.get_context("fork")
    out = fork.Queue()
    child = fork.Process(target=_write_in_child, args=(str(store.path), out))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert out.get(timeout=5) == [("q1",), ("q2",)]
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM queries").fetchone() == (2,)
