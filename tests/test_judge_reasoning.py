"""Reasoning models through the real litellm client against a fake reasoning model on 127.0.0.1.

Model strings that litellm's price map knows as reasoning models (openai/o3-mini,
openai/gpt-5-mini, dashscope/qwen-turbo) are pointed at the fake with api_base, so what the fake
receives is what litellm's own transformation for that model sends: max_completion_tokens, the
temperature the model takes, reasoning_effort, and (o3-mini) the system message as a user one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgepool.errors import UsageError
from judgepool.judge.base import JudgeAnswer, JudgeRequest, ShownSpan
from judgepool.judge.llm import LLMJudge, LLMSettings, load_litellm
from judgepool.judge.reasoning import REASONING_MAX_TOKENS, decoding, is_reasoning_model
from judgepool.pooling.store.connection import Store
from judgepool.reports.command_line import cli_words
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI
from tests.fake_reasoning import (
    ANSWER_TOKENS,
    PROMPT_TOKENS,
    REASONING_TOKENS,
    answer_in_reasoning,
    reasoned,
)
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
FAKE_KEY = "sk-judgepool-test-KEY-reasoning-0b1d"
OUT_TOKENS = ANSWER_TOKENS + REASONING_TOKENS


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("DASHSCOPE_API_KEY", FAKE_KEY)
    with FakeOpenAI(reply=reasoned) as server:
        yield server


def request(passage: str = "Water boils at 100 C. [[grade=3]]") -> JudgeRequest:
    return JudgeRequest("q1", "d1", "chunk", "boiling point", passage, (ShownSpan("d1", 0, 9),))


def ask(judge: LLMJudge, req: JudgeRequest | None = None) -> JudgeAnswer:
    async def once() -> JudgeAnswer:
        try:
            return await judge.judge(req or request())
        finally:
            await judge.aclose()

    return asyncio.run(once())


def llm(fake: FakeOpenAI, model: str, **options: Any) -> LLMJudge:
    return LLMJudge(LLMSettings(model=model, api_base=fake.api_base, **options))


def price(model: str, reasoning_rate: bool = False) -> float:
    """The cost of one fake reply by the price map, written out by hand."""
    p = load_litellm().model_cost[model]
    out = p["output_cost_per_token"]
    thinking = p.get("output_cost_per_reasoning_token", out) if reasoning_rate else out
    return (
        PROMPT_TOKENS * p["input_cost_per_token"]
        + ANSWER_TOKENS * out
        + (REASONING_TOKENS * thinking)
    )


def test_reasoning_models_are_found_in_litellm_model_map() -> None:
    assert [
        is_reasoning_model(m)
        for m in ("openai/o3-mini", "openai/gpt-5-mini", "dashscope/qwen-turbo")
    ] == [True, True, True]
    assert [
        is_reasoning_model(m)
        for m in ("openai/gpt-4o-mini", "openai/fake-model", "hosted_vllm/my-model")
    ] == [False, False, False]


def test_o3_mini_is_sent_what_litellm_sends_a_reasoning_model(fake: FakeOpenAI) -> None:
    judge = llm(fake, "openai/o3-mini", reasoning_effort="low")
    answer = ask(judge)
    sent = fake.requests[0].body
    system, user = judge.messages(request())
    # o3-mini takes no system message: litellm sends it as a user message; the cap is
    # max_completion_tokens, the temperature the only one o-series takes, the effort passed on.
    assert sent == {
        "model": "o3-mini",
        "messages": [{"role": "user", "content": system["content"]}, user],
        "temperature": 1.0,
        "max_completion_tokens": REASONING_MAX_TOKENS,
        "reasoning_effort": "low",
    }
    assert fake.calls == 1
    # The answer's line counts, not the different grade the reasoning drafted.
    assert (answer.status, answer.grade, answer.raw_output) == ("ok", 3, "##final score: 3")
    assert answer.tokens_out == OUT_TOKENS
    assert answer.provenance["reasoning_tokens"] == REASONING_TOKENS
    assert answer.cost == pytest.approx(price("o3-mini"), rel=1e-12)
    assert judge.describe()["reasoning"] == {"effort": "low"}


def test_gpt5_mini_keeps_its_system_message_and_the_provider_default_effort(
    fake: FakeOpenAI,
) -> None:
    answer = ask(llm(fake, "openai/gpt-5-mini", max_tokens=2000))
    sent = fake.requests[0].body
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert {k: v for k, v in sent.items() if k != "messages"} == {
        "model": "gpt-5-mini",
        "temperature": 1.0,
        "max_completion_tokens": 2000,
    }
    assert answer.cost == pytest.approx(price("gpt-5-mini"), rel=1e-12)


def test_reasoning_tokens_are_priced_at_the_reasoning_rate(fake: FakeOpenAI) -> None:
    """qwen-turbo charges reasoning tokens 2.5x its output tokens; it also takes temperature 0."""
    answer = ask(llm(fake, "dashscope/qwen-turbo", reasoning_effort="high"))
    sent = fake.requests[0].body
    assert (sent["temperature"], sent["max_completion_tokens"], sent["reasoning_effort"]) == (
        0.0,
        REASONING_MAX_TOKENS,
        "high",
    )
    assert "max_tokens" not in sent
    expected = price("dashscope/qwen-turbo", reasoning_rate=True)
    assert expected > price("dashscope/qwen-turbo") * 1.5  # the rate matters here
    assert answer.cost == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("where", ["reasoning_content", "thinking_blocks"])
def test_an_answer_only_in_the_reasoning_is_unparsed(fake: FakeOpenAI, where: str) -> None:
    fake.reply = answer_in_reasoning(where)
    answer = ask(llm(fake, "openai/o3-mini"))
    assert (answer.status, answer.grade, answer.raw_output) == ("unparsed", None, "")
    assert "never read for a grade" in answer.provenance["parse_problem"]
    assert answer.provenance["reasoning_chars"] > 0
    assert answer.cost == pytest.approx(price("o3-mini"), rel=1e-12)  # paid all the same


def test_an_answer_cut_off_while_reasoning_says_to_raise_the_cap(fake: FakeOpenAI) -> None:
    fake.reply = answer_in_reasoning(finish_reason="length")
    answer = ask(llm(fake, "openai/o3-mini", max_tokens=100))
    assert answer.status == "unparsed"
    assert "raise --max-tokens" in answer.provenance["parse_problem"]
    assert fake.requests[0].body["max_completion_tokens"] == 100


def test_a_temperature_the_model_refuses_is_a_usage_error(fake: FakeOpenAI) -> None:
    with pytest.raises(
        UsageError, match=r"temperature=0.0 is not accepted by openai/o3-mini"
    ) as no:
        llm(fake, "openai/o3-mini", temperature=0.0)
    assert "--temperature 0 is not accepted by openai/o3-mini" in no.value.say(cli_words)[0]
    assert llm(fake, "openai/o3-mini", temperature=1.0).parameters["temperature"] == 1.0
    assert fake.calls == 0


def test_an_unknown_effort_is_refused() -> None:
    with pytest.raises(UsageError, match="low, medium, high"):
        LLMJudge(LLMSettings("openai/o3-mini", reasoning_effort="extreme"))


def _key(model: str, **options: Any) -> str:
    return LLMJudge(LLMSettings(model, **options)).cache_key(
        JudgeRequest(
            "q1",
            "d1",
            "chunk",
            "What is the boiling point of water?",
            "Water boils at 100 °C at sea level.",
            (ShownSpan("d1", 0, 9),),
        )
    )


def test_cache_keys_of_models_that_do_not_reason_are_those_of_before() -> None:
    """Keys computed by the code before reasoning models were supported (commit a5191bf): a
    user's cache stays valid."""
    assert _key("openai/gpt-4o-mini") == (
        "judge1:980a5631ef994e051be1cf713588010ddc3031257ec706f62bd02746fa1c5c2e"
    )
    assert _key("openai/fake-model", api_base="http://127.0.0.1:1/v1") == (
        "judge1:5847abfa3888098cdde718e572c1eab28f6a1e7f6c5740d46b49cc6e8b6b4e7b"
    )
    assert _key("hosted_vllm/qwen", temperature=0.2, max_tokens=64) == (
        "judge1:537c7cb2ef46fcfe24d9d025354adfc13fcc74faa57cf13c888e5f829bc42ca1"
    )
    assert _key("anthropic/claude-3-5-haiku-20241022") == (
        "judge1:941ead2ce5146e957690df0a96185e8379a3382c546c7ff479b484e8b5acb1ea"
    )


def test_the_cache_key_changes_with_the_reasoning_effort() -> None:
    keys = {e: _key("openai/o3-mini", reasoning_effort=e) for e in (None, "low", "medium", "high")}
    assert len(set(keys.values())) == 4
    assert _key("openai/o3-mini", reasoning_effort="low") == keys["low"]  # and only with it


def test_batch_lines_carry_the_reasoning_parameters(fake: FakeOpenAI) -> None:
    """judge/batch builds its lines from the same judge: the body online is the batch body."""
    from judgepool.judge.batch.requests import LineBuilder

    judge = llm(fake, "openai/o3-mini", reasoning_effort="medium")
    ask(judge)
    assert LineBuilder(judge).body(request()) == fake.requests[0].body


def test_a_forecast_reserves_the_worst_case_at_the_reasoning_rate() -> None:
    judge = LLMJudge(LLMSettings("dashscope/qwen-turbo", max_tokens=1000))
    estimate = judge.estimate([request()])
    p = load_litellm().model_cost["dashscope/qwen-turbo"]
    worst_in = estimate.tokens_in * 1.25 + 16
    assert estimate.max_cost == pytest.approx(
        round(worst_in) * p["input_cost_per_token"] + 1000 * p["output_cost_per_reasoning_token"],
        rel=1e-12,
    )
    assert decoding("openai/gpt-4o-mini").parameters == {"temperature": 0.0, "max_tokens": 256}


# -- through the CLI --------------------------------------------------------------------------


def _judge(cli: Cli, fake: FakeOpenAI, *extra: str) -> CliResult:
    return cli(
        "judge",
        "--model",
        "openai/o3-mini",
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
        *extra,
    )  # the holes' calls only


def _labels(store: Store) -> list[tuple[str, str, int | None, dict[str, Any]]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT doc_id, status, grade, provenance FROM judgments "
            "WHERE source = 'judge' ORDER BY id"
        ).fetchall()
    return [(d, s, g, json.loads(p)) for d, s, g, p in rows]


def _copy(tmp_path_factory: pytest.TempPathFactory, path: Path) -> Store:
    return collection_copy(tmp_path_factory, path)


def test_cli_labels_holes_with_a_reasoning_model_and_its_cost(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, fake: FakeOpenAI, cli: Cli
) -> None:
    store = _copy(tmp_path_factory, tmp_path / "test.duckdb")
    result = _judge(cli, fake, "--reasoning-effort", "low")
    assert result.code == 0, result.err
    assert "openai/o3-mini is a reasoning model in litellm's model map" in result.err
    assert fake.calls == 6  # 7 pairs with text, 6 distinct texts
    ok = {d: g for d, s, g, _ in _labels(store) if s == "ok"}
    assert ok == EXPECTED
    cost = 6 * price("o3-mini")
    assert f"cost ${cost:.4f}" in result.out
    assert f"tokens {6 * PROMPT_TOKENS:,} in / {6 * OUT_TOKENS:,} out" in result.out


def test_cli_a_model_that_answers_only_in_its_reasoning_labels_nothing(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, fake: FakeOpenAI, cli: Cli
) -> None:
    store = _copy(tmp_path_factory, tmp_path / "test.duckdb")
    fake.reply = answer_in_reasoning()
    result = _judge(cli, fake)
    assert result.code == 5, result.err  # nothing labelled
    assert fake.calls == 12  # 6 texts, each asked again once after an unparsed answer
    statuses = {s for _, s, _, _ in _labels(store) if s != "no_text"}
    assert statuses == {"unparsed"}
    assert f"cost ${12 * price('o3-mini'):.4f}" in result.out
    assert "never read for a grade" in result.err + result.out


@pytest.mark.slow
def test_cli_a_cache_keyed_on_the_effort(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, fake: FakeOpenAI, cli: Cli
) -> None:
    """The same pairs judged at low effort, then high (paid again), then low (all cached)."""
    calls = []
    for number, effort in enumerate(("low", "high", "low")):
        db = tmp_path / f"run{number}.duckdb"
        _copy(tmp_path_factory, db)
        result = cli(
            "--db",
            db,
            "judge",
            "--model",
            "openai/o3-mini",
            "--api-base",
            fake.api_base,
            "--no-progress",
            "--no-canaries",
            "--reasoning-effort",
            effort,
        )
        assert result.code == 0, result.err
        calls.append(fake.calls)
    assert calls == [6, 12, 12]
    assert [r.body["reasoning_effort"] for r in fake.requests] == ["low"] * 6 + ["high"] * 6


def test_cli_refuses_a_temperature_the_model_does_not_take(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, fake: FakeOpenAI, cli: Cli
) -> None:
    _copy(tmp_path_factory, tmp_path / "test.duckdb")
    result = _judge(cli, fake, "--temperature", "0")
    assert result.code == 2
    assert "--temperature 0 is not accepted by openai/o3-mini" in result.err
    assert "leave out --temperature" in result.err
    assert fake.calls == 0
