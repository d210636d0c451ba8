"""Provider faults through the real CLI: what is retried, what stops the run, what a cap counts,
and the exit code that tells them apart (issue 11.8, 11.9, 11.10, 11.14).

Every test counts the fake server's requests exactly: a fault that retrying cannot fix costs one
request (at --concurrency 1), a timeout stays charged against --max-cost at its worst case.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.judge.run.plan import plan_holes
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import (
    BAD_KEY,
    CONTEXT_TOO_LONG,
    FORBIDDEN,
    NO_MODEL,
    QUOTA,
    FakeOpenAI,
    FakeRequest,
    Reply,
    default_reply,
)
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


def judge_args(fake: FakeOpenAI, *extra: str, model: str = "openai/fake-model") -> list[str]:
    """The judge command on the fake server; canaries off (their own tests: test_canaries.py),
    so that the faults scripted for the next calls hit the holes."""
    return [
        "judge",
        "--model",
        model,
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
        *extra,
    ]


def labels(store: Store) -> list[dict[str, Any]]:
    with store.read() as con:
        cursor = con.execute("SELECT * FROM judgments WHERE source = 'judge' ORDER BY id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def error_line(result: CliResult) -> str:
    lines = [line for line in result.err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.err
    assert " — " in lines[0], lines[0]  # the problem, then what to do
    return lines[0]


@pytest.mark.parametrize(
    ("reply", "problem", "todo"),
    [
        (QUOTA, "no quota or credit left (HTTP 429)", "add credit or raise the spending limit"),
        (BAD_KEY, "refused the key for openai/fake-model (HTTP 401)", "export the provider's key"),
        (
            FORBIDDEN,
            "refused access to openai/fake-model with this key (HTTP 403)",
            "may use this model",
        ),
        (NO_MODEL, "model openai/fake-model was not found (HTTP 404)", "check the model name"),
    ],
    ids=["insufficient_quota", "401", "403", "404"],
)
def test_errors_retrying_cannot_fix_stop_the_run_after_one_request(
    store: Store, fake: FakeOpenAI, cli: Cli, reply: Reply, problem: str, todo: str
) -> None:
    fake.reply = lambda r: reply
    result = cli(*judge_args(fake, "--concurrency", "1"))
    assert fake.calls == 1  # not 21 per pair: nothing retried, nothing else sent
    assert result.code == 1
    line = error_line(result)
    assert problem in line and todo in line
    assert "7 pairs were not labelled (the run stopped first)" in result.err
    assert Counter(r["status"] for r in labels(store)) == Counter({"no_text": 1})


def test_a_fatal_error_stops_at_once_at_higher_concurrency(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    fake.reply = lambda r: QUOTA
    result = cli(*judge_args(fake, "--concurrency", "4"))
    assert result.code == 1 and "no quota" in error_line(result)
    assert fake.calls <= 4  # at most the requests already in flight


def test_a_prompt_over_the_context_window_marks_that_pair_and_the_run_goes_on(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    fake.reply = lambda r: CONTEXT_TOO_LONG if "Kettles" in r.passage else default_reply(r)
    result = cli(*judge_args(fake, "--concurrency", "2"))
    assert fake.calls == 6  # one request each, the refused one not retried
    assert result.code == 4  # some holes failed
    kettle = [r for r in labels(store) if r["doc_id"] == "c3"]
    assert [r["status"] for r in kettle] == ["error"]
    assert kettle[0]["note"].startswith("context_window:")
    assert "maximum context length" in kettle[0]["note"]
    assert json.loads(kettle[0]["provenance"])["error"] == {"kind": "context_window", "attempts": 1}
    assert Counter(r["status"] for r in labels(store))["ok"] == 6
    assert (
        "failed: 1 pairs: context_window (prompt longer than the model's context window)"
        in result.out
    )
    line = error_line(result)
    assert "1 of 7 pairs attempted failed and are still holes (1 context_window)" in line
    assert "run the same command again to retry them" in line


@pytest.mark.slow
def test_server_errors_and_rate_limits_are_retried_and_counted(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    fake.push(
        Reply(status=429, headers={"retry-after-ms": "50"}), Reply(status=503), Reply(cut_off=True)
    )
    result = cli(*judge_args(fake, "--concurrency", "1"))
    assert result.code == 0, result.err
    assert fake.calls == 6 + 3
    assert "9 calls (1 answered 429, 3 retries)" in result.out


def test_every_hole_failing_exits_5_and_says_why(store: Store, fake: FakeOpenAI, cli: Cli) -> None:
    fake.reply = lambda r: Reply(status=500, content="upstream exploded")
    result = cli(*judge_args(fake, "--concurrency", "2", "--retries", "1"))
    assert fake.calls == 6 * 2  # every distinct text tried twice
    assert result.code == 5  # nothing labelled: not the same as some failed (4)
    assert "failed: 7 pairs: server (server error) after 2 attempts" in result.out
    assert "upstream exploded" in result.out
    line = error_line(result)
    assert "nothing was labelled: all 7 pairs attempted failed (7 server)" in line


def test_some_holes_failing_exits_4_with_the_counts(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    def reply(request: FakeRequest) -> Reply:
        if "Paris" in request.passage:
            return Reply(status=500)
        if "Kettles" in request.passage:
            return Reply("I cannot say.")
        return default_reply(request)

    fake.reply = reply
    result = cli(*judge_args(fake, "--retries", "0"))
    assert fake.calls == 6 + 1  # the unparsed answer is asked once more
    assert result.code == 4
    assert "failed: 1 pairs: unparsed" in result.out and "no grade found" in result.out
    assert "failed: 1 pairs: server (server error) after 1 attempt" in result.out
    line = error_line(result)
    assert "2 of 7 pairs attempted failed and are still holes" in line
    assert "1 server" in line and "1 unparsed" in line


def test_full_success_exits_0_and_a_cap_exits_6(store: Store, fake: FakeOpenAI, cli: Cli) -> None:
    capped = cli(*judge_args(fake, "--max-calls", "2", "--concurrency", "1"))
    assert capped.code == 6 and fake.calls == 2
    assert "stopped before exceeding --max-calls 2" in error_line(capped)
    done = cli(*judge_args(fake))
    assert done.code == 0, done.err
    assert fake.calls == 6


@pytest.mark.parametrize(
    ("fault", "timeout"),
    [
        pytest.param(Reply(hang=True), "1.5", id="timeout", marks=pytest.mark.slow),
        pytest.param(Reply(cut_off=True), "60", id="cut-off"),
    ],
)
def test_a_request_with_no_answer_stays_charged_at_its_worst_case(
    store: Store, fake: FakeOpenAI, cli: Cli, fault: Reply, timeout: str
) -> None:
    # (the timeout leaves litellm time to send the request, even on a busy machine: one that
    # expires before the request is out is charged too, but the server would not count it)
    settings = LLMSettings("openai/gpt-4o-mini", api_base=fake.api_base, max_tokens=64)
    first = plan_holes(store, depth=10).built.requests[:1]
    worst = LLMJudge(settings).estimate(first).max_cost
    assert worst is not None
    fake.reply = lambda r: fault
    result = cli(
        *judge_args(
            fake,
            "--concurrency",
            "1",
            "--max-tokens",
            "64",
            "--timeout",
            timeout,
            "--max-cost",
            str(3.5 * worst),
            model="openai/gpt-4o-mini",
        )
    )
    # the cap allows three worst cases: three requests, not 5 per pair for every pair
    assert fake.calls == 3
    assert result.code == 6
    assert "stopped before exceeding --max-cost" in error_line(result)
    assert (
        f"3 requests that got no answer (timed out or cut off), charged at their worst "
        f"case (up to ${3 * worst:.4f})"
    ) in result.out
    # three calls, the retries among them being the calls sent again for a pair (the last
    # failure's retry, refused by the cap, is none), and nothing but our own words on stderr
    # (no RuntimeWarning from a call cut short)
    retries = sum(n - 1 for n in fake.by_passage.values())
    assert f"3 calls (0 answered 429, {retries} retries)" in result.out, result.out
    assert "Warning" not in result.err, result.err


def test_a_dry_run_needs_no_key(store: Store, cli: Cli) -> None:
    result = cli("judge", "--model", "openai/gpt-4o-mini", "--dry-run")
    assert result.code == 0, result.err
    assert "estimated cost: $" in result.out and "to judge" in result.out
    assert (
        "a real run would stop here: no key for openai/gpt-4o-mini: set OPENAI_API_KEY"
        in result.err
    )
    real = cli("judge", "--model", "openai/gpt-4o-mini")
    assert real.code == 1 and "set OPENAI_API_KEY" in error_line(real)
