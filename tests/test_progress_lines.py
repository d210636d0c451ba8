"""A judge whose output is not a terminal (a CI log, a pipe) says how far it is every few seconds
(issue 24: the offline judge on TREC DL 2019 printed only its first line for 12 minutes, the
LLM judge nothing at all): the labelling loop's lines, and the offline judge's model load and
embedding. The real console entry point in a subprocess, its stderr a pipe, read as it comes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.progress_lines import clock, ticker
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import collection_copy
from tests.test_offline_judge import _ingest

Writer = Callable[[str, str | bytes], Path]
LINE = re.compile(r"^judging (?P<who>.+): (?P<done>\d+) of (?P<of>\d+) pairs \((?P<pc>\d+) %\)")


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb", doc_qrels=True)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judgepool-test-progress")
    with FakeOpenAI() as server:
        yield server


def run_logged(*args: str, every: float) -> tuple[int, list[tuple[float, str]], float]:
    """`judgepool ARGS` with stderr a pipe (no terminal), no --progress flag: its exit code, the
    stderr lines with the time each arrived, and the time it exited."""
    env = dict(os.environ, JUDGEPOOL_PROGRESS_EVERY=str(every))
    process = subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append((time.monotonic(), line.rstrip("\n")))

    with process:
        reader = threading.Thread(target=read)
        reader.start()
        code = process.wait(timeout=300)
        ended = time.monotonic()
        reader.join(10)
    return code, lines, ended


def test_an_llm_judge_in_a_log_prints_progress_lines_while_it_works(
    store: Store, fake: FakeOpenAI
) -> None:
    fake.latency = 0.4  # 6 calls one at a time: about 2.4 s of work
    code, lines, ended = run_logged(
        "judge",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-canaries",
        "--concurrency",
        "1",
        every=0.5,
    )
    assert code == 0, lines
    found = [(at, LINE.match(text)) for at, text in lines]
    progress = [(at, int(m["done"]), int(m["of"])) for at, m in found if m is not None]
    assert len(progress) >= 2, lines
    assert all(of == 8 for _, _, of in progress), lines  # 7 to judge, 1 without text
    # Lines while it works: each says more pairs done, and they arrived before the end.
    during = [(at, done) for at, done, of in progress if done < of]
    assert len(during) >= 2 and all(at < ended for at, _ in during), lines
    assert [done for _, done in during] == sorted(done for _, done in during), lines
    assert progress[-1][1:] == (8, 8), lines  # a run longer than the interval ends with a line
    text = "\n".join(t for _, t in lines)
    assert "openai/fake-model" in text and "so far" in text and "left" in text, text
    assert "\r" not in text and "\x1b" not in text  # no bar drawn into the log


def test_no_progress_keeps_a_log_quiet(
    store: Store, fake: FakeOpenAI, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process: what is proved is the flag, on output that is no terminal (captured here);
    the lines' arrival through a real pipe is the test above."""
    monkeypatch.setenv("JUDGEPOOL_PROGRESS_EVERY", "0.01")
    done = cli(
        "judge",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-canaries",
        "--no-progress",
    )
    assert done.code == 0, done.err
    assert not [t for t in done.err.splitlines() if LINE.match(t)], done.err


@pytest.mark.slow
def test_the_offline_judge_says_it_loads_its_model_and_how_far_it_embeds(
    cli: Callable[..., Any], write: Writer
) -> None:
    _ingest(cli, write)
    code, lines, _ = run_logged("judge", "--model", "offline", every=0.001)
    assert code == 0, lines
    text = [t for _, t in lines]
    assert any(t.startswith("offline judge: loading the model all-MiniLM-L6-v2") for t in text)
    embedded = [t for t in text if t.startswith("offline judge, chunk level, embedding: ")]
    assert embedded[0].startswith("offline judge, chunk level, embedding: 0 of 9 texts (0 %)")
    assert embedded[1].startswith("offline judge, chunk level, embedding: 9 of 9 texts (100 %)")
    assert text.index(embedded[0]) > text.index(next(t for t in text if "loading the model" in t))


def test_a_ticker_says_the_start_then_every_few_seconds_and_a_long_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said: list[str] = []
    monkeypatch.setenv("JUDGEPOOL_PROGRESS_EVERY", "0.2")
    tell = ticker(said.append, "embedding", "texts")
    tell(0, 10)
    tell(1, 10)  # too soon after the first: quiet
    time.sleep(0.25)
    tell(5, 10)
    time.sleep(0.25)
    tell(10, 10)
    assert [s.split(";")[0] for s in said] == [
        "embedding: 0 of 10 texts (0 %)",
        "embedding: 5 of 10 texts (50 %)",
        "embedding: 10 of 10 texts (100 %)",
    ]
    assert "about" in said[1] and "left" in said[1]
    quick: list[str] = []
    fast = ticker(quick.append, "embedding", "texts")
    fast(0, 3)
    fast(3, 3)  # done within the interval: the first line is enough
    assert len(quick) == 1
    assert [clock(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 05 s", "1 h 02 min"]


def test_a_long_step_says_what_it_is_doing_and_a_quick_one_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgepool.ui.working import working

    monkeypatch.setenv("JUDGEPOOL_PROGRESS_EVERY", "0.1")
    with working("computing the bootstrap intervals (10,000 resamples)", first_after=0.1):
        time.sleep(0.45)
    said = capsys.readouterr().err.splitlines()
    assert len(said) >= 2, said
    assert all(
        s.startswith("computing the bootstrap intervals (10,000 resamples): ")
        and s.endswith(" s so far")
        for s in said
    )
    with working("quick", first_after=1.0):
        pass
    assert capsys.readouterr().err == ""
