"""The LLM judge through the real litellm client against a real HTTP server on 127.0.0.1.

Each fault the fake server scripts must become exactly one HTTP request (litellm's and the
OpenAI SDK's own retries are off) and the right kind of failure for the loop to act on.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from judgepool.errors import JudgeError
from judgepool.judge.base import (
    JudgeAnswer,
    JudgeRequest,
    RequestRejected,
    ShownSpan,
    TransientJudgeFailure,
)
from judgepool.judge.llm import LLMJudge, LLMSettings, load_litellm
from tests.fake_openai import FakeOpenAI, Reply
from tests.fixtures_servers import FAKE_KEY


def request(passage: str = "Water boils at 100 C. [[grade=3]]") -> JudgeRequest:
    return JudgeRequest("q1", "d1", "chunk", "boiling point", passage, (ShownSpan("d1", 0, 9),))


def ask(judge: LLMJudge, req: JudgeRequest | None = None) -> JudgeAnswer:
    async def once() -> JudgeAnswer:
        try:
            return await judge.judge(req or request())
        finally:
            await judge.aclose()

    return asyncio.run(once())


def llm(fake: FakeOpenAI, model: str = "openai/fake-model", **options: object) -> LLMJudge:
    return LLMJudge(LLMSettings(model=model, api_base=fake.api_base, **options))  # type: ignore[arg-type]


def test_an_answer_is_parsed_with_usage_latency_and_provenance(fake: FakeOpenAI) -> None:
    answer = ask(llm(fake))
    assert (answer.status, answer.grade) == ("ok", 3)
    assert answer.raw_output is not None and answer.raw_output.endswith("##final score: 3")
    assert answer.tokens_in and answer.tokens_out and answer.latency_s and answer.latency_s > 0
    assert answer.cost is None  # fake-model has no price
    assert answer.provenance["parse"] == "last-line"
    assert answer.provenance["finish_reason"] == "stop"
    assert fake.calls == 1
    sent = fake.requests[0]
    assert sent.body["temperature"] == 0.0 and sent.body["max_tokens"] == 256
    assert sent.headers.get("authorization") == f"Bearer {FAKE_KEY}"  # the key went to the server
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]


def test_a_priced_model_gets_its_cost_from_the_price_map(fake: FakeOpenAI) -> None:
    fake.usage = (1000, 10)
    answer = ask(llm(fake, "openai/gpt-4o-mini"))
    prices = load_litellm().model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 10 * prices["output_cost_per_token"]
    assert answer.cost == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("reply", "kind", "retry_after"),
    [
        (
            Reply(status=429, headers={"retry-after-ms": "1500", "retry-after": "2"}),
            "rate_limit",
            1.5,
        ),
        (Reply(status=429, headers={"retry-after": "2"}), "rate_limit", 2.0),
        (Reply(status=429), "rate_limit", None),
        (Reply(status=500), "server", None),
        (Reply(status=502), "server", None),
        (Reply(status=503), "server", None),
        (Reply(body=b"this is not json"), "server", None),
    ],
)
def test_transient_failures_are_one_request_each(
    fake: FakeOpenAI, reply: Reply, kind: str, retry_after: float | None
) -> None:
    fake.push(reply)
    with pytest.raises(TransientJudgeFailure) as caught:
        ask(llm(fake))
    assert caught.value.kind == kind
    assert caught.value.retry_after == retry_after
    assert fake.calls == 1  # nobody retried behind the loop's back


@pytest.mark.parametrize(
    ("headers", "exhausted"),
    [
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "900"}, True),
        ({"x-ratelimit-remaining-requests": "12", "x-ratelimit-remaining-tokens": "900"}, False),
        ({"anthropic-ratelimit-requests-remaining": "0"}, True),
        ({}, None),
    ],
)
def test_a_429_says_whether_a_rate_limit_is_used_up(
    fake: FakeOpenAI, headers: dict[str, str], exhausted: bool | None
) -> None:
    """The provider's rate-limit headers, read through litellm: a 429 with every limit left
    above 0 is an overload, not the limit (the throttle does not cut its window for it)."""
    fake.push(Reply(status=429, headers={"retry-after-ms": "50", **headers}))
    with pytest.raises(TransientJudgeFailure) as caught:
        ask(llm(fake))
    assert caught.value.kind == "rate_limit" and caught.value.exhausted is exhausted


def test_a_timeout_is_transient(fake: FakeOpenAI) -> None:
    fake.push(Reply(content="##final score: 1", delay=3.0))
    with pytest.raises(TransientJudgeFailure) as caught:
        ask(llm(fake, timeout=0.3))
    assert caught.value.kind == "timeout"
    assert fake.calls == 1


def test_a_refused_connection_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once the socket is closed
    judge = LLMJudge(LLMSettings("openai/fake-model", api_base=f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(TransientJudgeFailure) as caught:
        ask(judge)
    assert caught.value.kind == "connection"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "refused the key"),
        (403, "refused access to"),
        (404, "was not found"),
        (400, "rejected the request"),
    ],
)
def test_errors_that_would_fail_every_call_are_fatal(
    fake: FakeOpenAI, status: int, message: str
) -> None:
    fake.push(Reply(status=status, content="nope"))
    with pytest.raises(JudgeError, match=message) as caught:
        ask(llm(fake))
    assert FAKE_KEY not in str(caught.value) and FAKE_KEY not in (caught.value.hint or "")


def test_a_passage_too_long_for_the_model_fails_that_request_only(fake: FakeOpenAI) -> None:
    fake.push(
        Reply(
            status=400,
            body=b'{"error": {"message": "This model\'s maximum context '
            b'length is 8192 tokens.", "code": "context_length_exceeded"}}',
        )
    )
    with pytest.raises(RequestRejected) as caught:
        ask(llm(fake))
    assert caught.value.kind == "context_window"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(content=""), "empty answer"),
        (
            Reply(body=b'{"id": "x", "object": "chat.completion", "choices": [], "model": "m"}'),
            "empty answer",
        ),
        (Reply(content="I'm sorry, I can't help with that."), "no grade found"),
    ],
)
def test_answers_without_a_grade_are_unparsed(fake: FakeOpenAI, reply: Reply, problem: str) -> None:
    fake.push(reply)
    answer = ask(llm(fake))
    assert (answer.status, answer.grade) == ("unparsed", None)
    assert answer.provenance["parse_problem"] == problem


def test_readiness_says_when_no_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = LLMJudge(LLMSettings("openai/gpt-4o-mini")).readiness()
    assert isinstance(problem, JudgeError) and "OPENAI_API_KEY" in str(problem)
    # a local server behind hosted_vllm needs no key
    assert (
        LLMJudge(LLMSettings("hosted_vllm/m", api_base="http://127.0.0.1:1/v1")).readiness() is None
    )
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert LLMJudge(LLMSettings("openai/gpt-4o-mini")).readiness() is None


def test_a_local_server_without_keys_works_through_hosted_vllm(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    answer = ask(llm(fake, "hosted_vllm/fake-model"))
    assert (answer.status, answer.grade) == ("ok", 3)


def test_describe_names_the_host_never_credentials(fake: FakeOpenAI) -> None:
    base = f"http://user:{FAKE_KEY}@127.0.0.1:{fake.port}/v1?api_key={FAKE_KEY}"
    judge = LLMJudge(LLMSettings("openai/fake-model", api_base=base, temperature=0.2))
    described = judge.describe()
    assert described["api_base_host"] == f"127.0.0.1:{fake.port}"
    assert FAKE_KEY not in repr(described)
    assert described["parameters"] == {"temperature": 0.2, "max_tokens": 256}
    assert described["template"]["version"] == "relevance-v1"
    assert judge.labeller == "openai/fake-model@relevance-v1"


def test_estimates_count_tokens_and_price_when_known(fake: FakeOpenAI) -> None:
    reqs = [request(), request("Another passage entirely, a little longer than the first.")]
    unknown = llm(fake).estimate(reqs)
    assert unknown.requests == 2 and unknown.tokens_in > 100 and unknown.cost is None
    priced = llm(fake, "openai/gpt-4o-mini", max_tokens=100).estimate(reqs)
    assert priced.tokens_in == unknown.tokens_in
    assert priced.cost is not None and priced.max_cost is not None
    assert priced.max_cost > priced.cost > 0
    assert llm(fake).estimate([]).tokens_in == 0
