"""`eval`, `compare` and `report` open the database file once: their reads share one
connection (a start-up cost).

Each open of a DuckDB file costs an attach and a schema check (~5 ms; a connect of its own
cost ~30 ms); `eval` on a small database is mostly start-up, so its reads (rankings, labels,
judge labels, canaries, groups) share the read connection the verb holds. An open is counted
where the store attaches the file, and anywhere a file is connected to directly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from judgepool.api.evaluate import evaluate
from judgepool.api.store import Store
from judgepool.pooling.store import connection
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def _two_runs(cli: Cli, write: Writer) -> None:
    qrels = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(0, 5, 2))
    assert cli("ingest", "qrels", write("q.qrels", qrels)).code == 0
    for name, top in (("r", 10), ("s", 5)):
        run = "".join(f"q{q} Q0 d{d} {d} {top - d} t\n" for q in range(3) for d in range(5))
        assert cli("ingest", "run", write(f"{name}.trec", run), "--name", name).code == 0


def _counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    connect = duckdb.connect
    attach = connection._attach

    def counting(database: str, *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        if database != ":memory:":
            opened.append(database)
        return connect(database, *args, **kwargs)

    def counting_attach(path: Path, read_only: bool) -> Any:
        opened.append(str(path))
        return attach(path, read_only)

    monkeypatch.setattr(duckdb, "connect", counting)
    monkeypatch.setattr(connection, "_attach", counting_attach)
    return opened


def test_eval_opens_the_file_once(cli: Cli, write: Writer, monkeypatch: pytest.MonkeyPatch) -> None:
    _two_runs(cli, write)
    opened = _counting_opens(monkeypatch)
    result = evaluate(Store())
    assert list(result.result.runs) == ["r", "s"]
    assert len(opened) == 1


@pytest.mark.parametrize(
    "args",
    [
        ("eval", "--format", "json"),
        ("compare", "r", "s", "--force", "--format", "json"),
        ("report", "r", "s", "--force", "--markdown", "report.md"),
    ],
)
def test_the_commands_open_the_file_once(
    cli: Cli, write: Writer, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    """With no --level, the default level is read on the connection the figures use (before,
    the option's check opened the file once more)."""
    _two_runs(cli, write)
    opened = _counting_opens(monkeypatch)
    done = cli(*args, "--resamples", "20")
    assert done.code == 0, done.err
    assert len(opened) == 1
