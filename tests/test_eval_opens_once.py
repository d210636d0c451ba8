"""`eval` opens the database file once: its reads share one connection (a start-up cost).

Each open of a DuckDB file costs a connect and a schema check (~30 ms); `eval` on a small
database is mostly start-up, so its reads (rankings, labels, judge labels, canaries, groups)
share the read connection the verb holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from judgepool.api.evaluate import evaluate
from judgepool.api.store import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def test_eval_opens_the_file_once(cli: Cli, write: Writer, monkeypatch: pytest.MonkeyPatch) -> None:
    run = "".join(f"q{q} Q0 d{d} {d} {10 - d} t\n" for q in range(3) for d in range(5))
    qrels = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(0, 5, 2))
    assert cli("ingest", "qrels", write("q.qrels", qrels)).code == 0
    assert cli("ingest", "run", write("r.trec", run), "--name", "r").code == 0
    opened: list[str] = []
    connect = duckdb.connect

    def counting(database: str, *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        if database != ":memory:":
            opened.append(database)
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", counting)
    result = evaluate(Store())
    assert list(result.result.runs) == ["r"]
    assert len(opened) == 1
