"""A DuckDB file that is not ours is never changed: reads and ingest refuse it (issue 11.6).

Only an ingest into a new or empty file creates judgepool's schema.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from judgepool.errors import DatabaseError
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def _tables(path: Path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        return sorted(str(r[0]) for r in rows)
    finally:
        con.close()


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    path = tmp_path / "analytics.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE events (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO events VALUES (1, 'click')")
    con.close()
    return path


@pytest.mark.parametrize(
    "args",
    [("status",), ("runs",), ("queries",), ("pool",), ("eval",), ("export", "qrels")],
)
def test_reads_refuse_another_applications_database_and_leave_it_alone(
    cli: Cli, foreign: Path, args: tuple[str, ...]
) -> None:
    done = cli("--db", foreign, *args)
    assert done.code != 0
    assert "not a judgepool database" in done.err
    assert "point --db" in done.err
    assert _tables(foreign) == ["events"]


def test_ingest_refuses_another_applications_database(
    cli: Cli, foreign: Path, write: Writer
) -> None:
    run = write("bm25.trec", "q1 Q0 d1 1 1.0 bm25\n")
    done = cli("--db", foreign, "ingest", "run", run)
    assert done.code != 0
    assert "not a judgepool database" in done.err
    assert _tables(foreign) == ["events"]


def test_a_write_that_is_not_an_ingest_creates_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.duckdb")
    label = Judgment("q1", "d1", 1, "human", "me")
    with pytest.raises(DatabaseError, match="no database at"):
        write_judgments(store, [label])
    assert not store.exists()


def test_an_empty_duckdb_file_is_read_as_empty_and_filled_by_ingest(
    cli: Cli, tmp_path: Path, write: Writer
) -> None:
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    done = cli("--db", path, "status")
    assert done.code != 0 and "is empty" in done.err and "judgepool ingest" in done.err
    assert _tables(path) == []
    run = write("bm25.trec", "q1 Q0 d1 1 1.0 bm25\n")
    assert cli("--db", path, "ingest", "run", run).code == 0
    assert "runs" in _tables(path)
    assert cli("--db", path, "status").code == 0
