"""The judge verbs' command line is a renderer over the api (issue 20.3; that the ui imports
nothing below the api is tests/test_import_graph.py's): `judgepool judge` and
`jp.Database.judge` reach one service (judgepool/api/judge.py), so the same run through each
writes the same labels and reports the same counts.

The judge is the real litellm client talking to the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import judge_runs
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]
FAKE_KEY = "sk-judgepool-service-KEY-3b1d7e"


def _labels(store: Store) -> list[tuple[object, ...]]:
    with store.read() as con:
        return con.execute(
            "SELECT qid, doc_id, level, grade, status, labeller, purpose FROM judgments "
            "WHERE source = 'judge' ORDER BY ALL"
        ).fetchall()


def _table(out: str, header: str) -> dict[str, list[str]]:
    """The rows of the printed table whose header line starts with `header`, by first cell."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows: dict[str, list[str]] = {}
    for i in range(start + 2, len(lines)):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if "  " not in lines[i] or following.startswith("-"):  # the end, or the next table
            break
        cells = lines[i].split()
        rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.slow
def test_the_cli_and_the_library_run_the_same_service(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    by_cli = collection_copy(tmp_path_factory, tmp_path / "cli.duckdb")
    by_library = collection_copy(tmp_path_factory, tmp_path / "library.duckdb")
    with FakeOpenAI() as fake:
        # each its own cache, so that both pay for every text and the calls can be compared
        monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(tmp_path / "cli-cache"))
        result = cli(
            "--db",
            by_cli.path,
            "judge",
            "--model",
            "openai/fake-model",
            "--api-base",
            fake.api_base,
            "--canaries",
            "1",
            "--no-progress",
        )
        assert result.code == 0, result.err
        cli_calls = fake.calls
        monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(tmp_path / "library-cache"))
        report = jp.open(by_library.path).judge(
            "openai/fake-model", api_base=fake.api_base, canaries=1
        )
        library_calls = fake.calls - cli_calls
    # the same labels, canaries included, and the same calls
    written = _labels(by_cli)
    assert written == _labels(by_library)
    assert {row[6] for row in written} == {"label", "canary"}
    assert cli_calls == library_calls > 0
    assert report.run is not None
    assert report.calls + report.run.canary_calls == library_calls
    # what the CLI prints is what the report holds, and both are what the database holds
    holes = Counter(str(row[4]) for row in written if row[6] == "label")
    assert report.outcomes == dict(holes) == {"ok": 7, "no_text": 1}
    printed = _table(result.out, "status")
    assert {k: int(v[0]) for k, v in printed.items()} == report.outcomes
    judged = _table(result.out, "run")
    assert {run: int(cells[-1]) for run, cells in judged.items()} == dict(
        zip(report.judged["run"], report.judged["holes_left"], strict=True)
    )
    assert f"{report.calls} calls" in result.out
    # the same run recorded, with the same canary check
    recorded = [
        [(r.labeller, r.role, r.command, r.canaries_graded) for r in judge_runs(s)]
        for s in (by_cli, by_library)
    ]
    assert recorded[0] == recorded[1] and len(recorded[0]) == 1
