"""Test fixtures: every test gets its own database, cache and working folder under tmp_path.

No test writes inside the repository, none reaches the network, and tests that need
../shared/data skip with the reason when it is absent. The shared fixtures live in the plugins
below: databases built once per session and copied (`prebuilt`, `store`), the fake servers.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.report_shape import check_report_text, prints_a_report

pytest_plugins = ("tests.fixtures_databases", "tests.fixtures_servers", "tests.fixtures_demo")

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "judgepool"  # the code; the top-level pooling/, judge/ ... are links for reading
SHARED_DATA = Path(os.environ.get("JUDGEPOOL_SHARED_DATA", REPO.parent / "shared" / "data"))
# Hypothesis writes a cache to ./.hypothesis while collecting, before any fixture runs: not here.
_HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "judgepool-hypothesis"
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(_HYPOTHESIS_HOME))


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point all state at tmp_path and keep heavy libraries offline."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEPOOL_DB", str(tmp_path / "test.duckdb"))
    monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.delenv("JUDGEPOOL_DEBUG", raising=False)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a skip that says it is absent."""
    if not (SHARED_DATA / "trec-dl").is_dir():
        pytest.skip(f"shared data absent: {SHARED_DATA} (set JUDGEPOOL_SHARED_DATA to its path)")
    return SHARED_DATA


@dataclass
class CliResult:
    """What one in-process `judgepool` invocation printed and returned."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run `judgepool ARGS...` in-process, exactly as the console script does."""
    from judgepool.ui.cli import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        captured = capsys.readouterr()
        if captured.out.strip() and prints_a_report([str(a) for a in args]):
            check_report_text(captured.out)  # the report's shape, as its pydantic models say
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write a small inline file under tmp_path and return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write
