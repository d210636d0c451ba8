"""A judge pointed at a server that is down stops after a few connection failures in a row,
says which address and what to check, and plants no canary (issue 22.9); canaries are planted
only when the judge answered some hole of the run."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]


def _closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _judge_rows(store: Store) -> list[tuple[str, int]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT purpose, count(*) FROM judgments WHERE source = 'judge' "
            "AND status <> 'no_text' GROUP BY purpose ORDER BY purpose"
        ).fetchall()
    return [(str(p), int(n)) for p, n in rows]


def test_a_judge_at_a_dead_server_stops_soon_and_names_it(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    result = cli("judge", "--model", "openai/m", "--api-base", base, "--no-progress")
    took = time.monotonic() - started
    assert result.code != 0
    assert f"cannot reach the judge at {base}" in result.err, result.err
    assert "calls in a row failed to connect" in result.err
    assert "check that the server is running" in result.err
    assert took < 60
    assert _judge_rows(store) == []  # no canary planted against the dead server
    assert "canaries" not in result.out or "not run" in result.out


def test_canaries_only_follow_an_answered_hole(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI() as fake:
        args = ("judge", "--model", "openai/m", "--api-base", fake.api_base, "--no-progress")
        first = cli(*args)
        assert first.code == 0, first.err
        holes, planted = dict(_judge_rows(store))["label"], dict(_judge_rows(store))["canary"]
        assert holes > 0 and planted > 0
        calls = fake.calls
        again = cli(*args)  # no hole left: nothing to check, nothing planted, nothing paid
    assert again.code == 0, again.err
    assert fake.calls == calls
    assert dict(_judge_rows(store)) == {"label": holes, "canary": planted}
    assert "canaries" not in again.out or "not planted: no hole to judge" in again.out
