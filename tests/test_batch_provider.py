"""Batch judging's foundation: lines, the files/batches client, and reading the answers back.

Everything runs through the real litellm client against a real HTTP server on 127.0.0.1
(tests/fake_openai_batch.py), which answers each line as tests/fake_openai.py answers the same
chat request; every test counts the server's requests per route exactly.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judgepool.errors import JudgeError
from judgepool.judge.base import JudgeRequest
from judgepool.judge.batch.parse import Collected, collect
from judgepool.judge.batch.provider import BatchClient, BatchProviderError, BatchStatus
from judgepool.judge.batch.requests import (
    BatchFile,
    LineBuilder,
    custom_id_for,
    split_files,
)
from judgepool.judge.batch.support import OPENAI_LIMITS, BatchLimits, batch_rates, batch_support
from judgepool.judge.llm import LLMJudge, LLMSettings, load_litellm
from judgepool.judge.run.plan import plan_holes
from judgepool.pooling.store.connection import Store
from judgepool.reports.command_line import cli_words
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply
from tests.fake_openai_batch import FakeBatchAPI, LineFault
from tests.judge_fixtures import EXPECTED, collection_copy

FAKE_KEY = "sk-judgepool-batch-KEY-5e8a1c7d9b3f"
MODEL = "openai/gpt-4o-mini"  # priced in litellm's map, with batch prices


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


@pytest.fixture
def fake() -> Iterator[FakeBatchAPI]:
    with FakeBatchAPI() as server:
        yield server


def judge_for(api_base: str, model: str = MODEL, **settings: Any) -> LLMJudge:
    return LLMJudge(LLMSettings(model=model, api_base=api_base, **settings))


def requests_of(store: Store) -> list[JudgeRequest]:
    return plan_holes(store, depth=10).built.requests  # 7 requests, 6 distinct texts


@dataclass
class Cycle:
    """One batch from upload to download: the statuses polled and what came back."""

    polled: list[str]
    final: BatchStatus
    collected: Collected


async def run_cycle(
    client: BatchClient,
    file: BatchFile,
    rates: Any = None,
    cancel_after: int | None = None,
    max_polls: int = 10,
) -> Cycle:
    uploaded = await client.upload(file.name, file.data())
    batch = await client.create(uploaded.id, metadata={"judgepool_file": file.sha256})
    polled = [batch.status]
    while not batch.finished and len(polled) <= max_polls:
        if cancel_after is not None and len(polled) == cancel_after + 1:
            batch = await client.cancel(batch.id)
        else:
            batch = await client.retrieve(batch.id)
        polled.append(batch.status)
    files = [await client.content(f) for f in (batch.output_file_id, batch.error_file_id) if f]
    expected = [e.custom_id for e in file.entries]
    return Cycle(polled, batch, collect(expected, files, rates, batch.id))


def cycle(fake: FakeBatchAPI, file: BatchFile, model: str = MODEL, **kwargs: Any) -> Cycle:
    async def go() -> Cycle:
        async with BatchClient(model, api_base=fake.api_base, backoff=0.01) as client:
            return await run_cycle(client, file, batch_rates(model), **kwargs)

    return asyncio.run(go())


def one_file(store: Store, fake: FakeBatchAPI, model: str = MODEL) -> BatchFile:
    builder = LineBuilder(judge_for(fake.api_base, model))
    (file,) = split_files(builder.entries(requests_of(store)), OPENAI_LIMITS)
    return file


def grades_by_doc(file: BatchFile, collected: Collected) -> dict[str, int | None]:
    return {
        request.doc_id: outcome.answer.grade if outcome.answer else None
        for entry in file.entries
        for request in entry.requests
        for outcome in [collected.outcomes[entry.custom_id]]
    }


def test_upload_create_poll_download_parse_with_exact_requests(
    store: Store, fake: FakeBatchAPI
) -> None:
    file = one_file(store, fake)
    assert len(file.entries) == 6 and sum(len(e.requests) for e in file.entries) == 7
    done = cycle(fake, file)
    assert done.polled == ["validating", "validating", "in_progress", "completed"]
    assert done.final.counts.total == done.final.counts.completed == 6
    assert done.final.counts.failed == 0 and done.final.error_file_id is None
    # one upload, one create, three polls, one download: litellm fetched nothing by itself
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
    assert done.collected.counts() == Counter(ok=6)
    assert grades_by_doc(file, done.collected) == EXPECTED
    assert (done.collected.malformed, done.collected.duplicates, done.collected.unknown) == (
        0,
        0,
        [],
    )
    answer = done.collected.outcomes[file.entries[0].custom_id].answer
    assert answer is not None and answer.tokens_in and answer.tokens_out
    assert answer.provenance["batch"]["id"] == done.final.id
    assert answer.provenance["batch"]["custom_id"] == file.entries[0].custom_id
    assert answer.provenance["parse"] == "last-line" and answer.latency_s is None


def test_polling_a_completed_batch_downloads_nothing_behind_our_back(
    store: Store, fake: FakeBatchAPI
) -> None:
    """litellm's own cost logging fetches a completed batch's output file after each retrieve,
    in the background (~0.1 s later), unless told not to: we tell it."""
    file = one_file(store, fake)

    async def poll() -> None:
        async with BatchClient(MODEL, api_base=fake.api_base) as client:
            uploaded = await client.upload(file.name, file.data())
            batch = await client.create(uploaded.id)
            for _ in range(5):
                batch = await client.retrieve(batch.id)
            assert batch.status == "completed"
            await asyncio.sleep(0.6)  # time for background work to reach the server

    asyncio.run(poll())
    assert fake.counts == Counter(upload=1, create=1, retrieve=5)


def test_costs_are_at_batch_price_half_the_online_price(store: Store, fake: FakeBatchAPI) -> None:
    file = one_file(store, fake)
    done = cycle(fake, file)
    judge = judge_for(fake.api_base)
    rates = batch_rates(MODEL)
    assert rates is not None and rates.basis == "litellm batch price"
    total = 0.0
    for outcome in done.collected.outcomes.values():
        answer = outcome.answer
        assert answer is not None and answer.tokens_in and answer.tokens_out
        online = judge.price(answer.tokens_in, answer.tokens_out)
        assert online is not None and answer.cost == pytest.approx(online / 2, rel=1e-12)
        assert answer.provenance["price_basis"] == "litellm batch price"
        total += answer.cost
    assert done.collected.cost == pytest.approx(total) and total > 0
    # a model with online prices only is priced at half of them, and says so
    half = batch_rates("openai/gpt-3.5-turbo")
    info = load_litellm().get_model_info("openai/gpt-3.5-turbo")
    assert half is not None and half.input == info["input_cost_per_token"] / 2
    assert half.basis.startswith("half the online price")
    # an unknown model has no price: its answers cost None, never 0
    assert batch_rates("openai/no-such-model-anywhere") is None
    unpriced = collect(
        [e.custom_id for e in file.entries],
        [fake.files[done.final.output_file_id or ""].data],
        None,
    )
    assert unpriced.cost is None
    assert {o.answer.cost for o in unpriced.outcomes.values() if o.answer} == {None}


@pytest.mark.parametrize(
    ("model", "settings"),
    [(MODEL, {}), ("hosted_vllm/qwen-batch", {}), ("openai/o3-mini", {"temperature": 1.0})],
)
def test_lines_are_the_online_requests_and_get_the_online_grades(
    store: Store, fake: FakeBatchAPI, model: str, settings: dict[str, Any]
) -> None:
    requests = requests_of(store)
    with FakeOpenAI() as online:
        judge = judge_for(online.api_base, model, **settings)

        async def ask() -> list[int | None]:
            grades = [(await judge.judge(r)).grade for r in requests]
            await judge.aclose()
            return grades

        online_grades = asyncio.run(ask())
        sent = [r.body for r in online.requests]
    builder = LineBuilder(judge_for(fake.api_base, model, **settings))
    entries = builder.entries(requests)
    bodies = {e.key: json.loads(e.line)["body"] for e in entries}
    for request, online_body in zip(requests, sent, strict=True):
        assert bodies[judge.cache_key(request)] == online_body  # same body, same cache key
    (file,) = split_files(entries, OPENAI_LIMITS)
    done = cycle(fake, file, model)
    by_key = {e.key: done.collected.outcomes[e.custom_id] for e in entries}
    batch_grades = [by_key[judge.cache_key(r)].answer for r in requests]
    assert [a.grade if a else None for a in batch_grades] == online_grades
    assert online_grades == [EXPECTED[r.doc_id] for r in requests]


def test_custom_ids_are_deterministic_from_the_cache_key_and_unique(
    store: Store, fake: FakeBatchAPI
) -> None:
    requests = requests_of(store)
    first = LineBuilder(judge_for(fake.api_base)).entries(requests)
    again = LineBuilder(judge_for(fake.api_base)).entries(list(reversed(requests)))
    assert {e.custom_id: e.line for e in first} == {e.custom_id: e.line for e in again}
    assert [e.custom_id for e in first] == [custom_id_for(e.key) for e in first]
    assert len({e.custom_id for e in first}) == len(first) == 6
    shared = [e for e in first if len(e.requests) > 1]
    assert [sorted(r.doc_id for r in e.requests) for e in shared] == [["c5", "c6"]]
    (one,) = split_files(first, OPENAI_LIMITS)
    (two,) = split_files(LineBuilder(judge_for(fake.api_base)).entries(requests), OPENAI_LIMITS)
    assert one.sha256 == two.sha256 and one.name == two.name  # a rerun recognises its file
    other = LineBuilder(judge_for(fake.api_base, max_tokens=64)).entries(requests)
    assert not {e.custom_id for e in other} & {e.custom_id for e in first}


def _faulty(request: FakeRequest) -> Reply:
    if "Kettles" in request.passage:
        return Reply(status=500, content="the model is overloaded")
    if "Paris" in request.passage:
        return Reply("I would rather not say.")
    return default_reply(request)


def _fault(custom_id: str, request: FakeRequest) -> LineFault | None:
    if "Hamlet" in request.passage:
        return LineFault("error", "server_error", "request failed")
    if "Salt" in request.passage:
        return LineFault("corrupt")
    if "altitude" in request.passage:
        return LineFault("missing")
    return None


def test_error_file_lines_unparsed_missing_and_corrupt_lines_are_counted_not_zero(
    store: Store,
) -> None:
    with FakeBatchAPI(reply=_faulty, fault=_fault) as fake:
        file = one_file(store, fake)
        done = cycle(fake, file)
        assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=2)
    assert done.final.status == "completed" and done.final.error_file_id is not None
    assert done.final.counts == type(done.final.counts)(total=6, completed=3, failed=2)
    outcomes = {
        r.doc_id: done.collected.outcomes[e.custom_id] for e in file.entries for r in e.requests
    }
    assert {d: o.status for d, o in outcomes.items()} == {
        "c1": "ok",
        "c2": "missing",
        "c3": "error",
        "c5": "missing",
        "c6": "missing",
        "c7": "error",
        "c10": "unparsed",
    }
    assert outcomes["c1"].answer is not None and outcomes["c1"].answer.grade == 3
    assert (outcomes["c3"].kind, outcomes["c3"].http_status) == ("http_500", 500)
    assert outcomes["c3"].message == "the model is overloaded"
    assert (outcomes["c7"].kind, outcomes["c7"].message) == ("server_error", "request failed")
    unparsed = outcomes["c10"].answer
    assert unparsed is not None and unparsed.grade is None
    assert unparsed.raw_output == "I would rather not say." and unparsed.tokens_in
    assert unparsed.provenance["parse_problem"] == "no grade found"
    assert done.collected.malformed == 1  # the corrupt line: its pairs stay missing
    assert done.collected.counts() == Counter(ok=1, unparsed=1, error=2, missing=2)
    assert all(o.answer is None or o.answer.grade != 0 for o in outcomes.values())


def test_cancel_moves_through_cancelling_to_cancelled_with_the_work_done(store: Store) -> None:
    with FakeBatchAPI(polls_validating=0, polls_in_progress=2) as fake:
        file = one_file(store, fake)
        done = cycle(fake, file, cancel_after=1)
        assert fake.counts == Counter(upload=1, create=1, retrieve=2, cancel=1, content=1)
    assert done.polled == ["validating", "in_progress", "cancelling", "cancelled"]
    assert done.collected.counts() == Counter(ok=2, missing=4)
    assert done.final.counts.completed == 2


@pytest.mark.parametrize("error_lines", [True, False])
def test_expired_batch_gives_partial_output_and_the_rest_stays_unanswered(
    store: Store, error_lines: bool
) -> None:
    with FakeBatchAPI(expire_after=2, expired_errors=error_lines) as fake:
        file = one_file(store, fake)
        done = cycle(fake, file)
        assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1 + error_lines)
    assert done.final.status == "expired" and done.final.collectable
    ok = [o for o in done.collected.outcomes.values() if o.status == "ok"]
    assert len(ok) == 2
    rest = Counter(o.kind for o in done.collected.outcomes.values() if o.status != "ok")
    assert rest == (Counter(batch_expired=4) if error_lines else Counter(missing=4))


@pytest.mark.slow
def test_files_split_at_the_limits_and_each_batch_answers_its_own_lines(
    store: Store,
) -> None:
    limits = BatchLimits(max_requests=2, max_bytes=10_000_000, source="test")
    with FakeBatchAPI(max_requests=2, polls_validating=0, polls_in_progress=0) as fake:
        builder = LineBuilder(judge_for(fake.api_base))
        entries = builder.entries(requests_of(store))
        unsplit = split_files(entries, OPENAI_LIMITS)
        refused = cycle(fake, unsplit[0])  # the provider refuses a file over its limit
        assert refused.final.status == "failed"
        assert any("too_many_requests" in e for e in refused.final.errors)
        assert refused.collected.counts() == Counter(missing=6)
        files = split_files(entries, limits)
        assert [len(f.entries) for f in files] == [2, 2, 2]
        done = [cycle(fake, f) for f in files]
        assert fake.counts == Counter(upload=4, create=4, retrieve=4, content=3)
    assert all(d.final.status == "completed" for d in done)
    answered = [c for d in done for c, o in d.collected.outcomes.items() if o.status == "ok"]
    assert sorted(answered) == sorted(e.custom_id for e in entries)
    sizes = [len(e.line) for e in entries]
    by_bytes = split_files(entries, BatchLimits(10, sizes[0] + sizes[1], "test"))
    assert all(f.size <= sizes[0] + sizes[1] for f in by_bytes) and len(by_bytes) >= 3
    assert [e for f in by_bytes for e in f.entries] == entries
    with pytest.raises(JudgeError, match="larger than a whole batch file") as too_big:
        split_files(entries, BatchLimits(10, min(sizes) - 1, "test"))
    assert "--passage-tokens" in (too_big.value.say(cli_words)[1] or "")  # the command line's
    assert "passage_tokens" in (too_big.value.hint or "")  # the library's words


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("anthropic/claude-3-5-haiku-latest", "cannot create Anthropic message batches"),
        ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "Bedrock's own output records"),
        ("ollama/llama3.1", "does not support provider 'ollama'"),
    ],
)
def test_a_provider_without_batches_is_refused_with_what_to_do(model: str, reason: str) -> None:
    with pytest.raises(JudgeError, match="no batch API") as refused:
        BatchClient(model)
    assert reason in str(refused.value)
    assert "without --batch" in (refused.value.say(cli_words)[1] or "")  # the command line's
    assert "without submit_batch" in (refused.value.hint or "")  # the library's words
    assert batch_support(MODEL).tested and batch_support(MODEL).limits == OPENAI_LIMITS


def test_the_pinned_litellm_indeed_cannot_create_anthropic_batches() -> None:
    """The support table's claim, checked on the installed litellm (no request is made)."""
    litellm = load_litellm()

    async def create() -> None:
        await litellm.acreate_batch(
            completion_window="24h",
            endpoint="/v1/chat/completions",
            input_file_id="file-x",
            custom_llm_provider="anthropic",
        )

    with pytest.raises(
        litellm.BadRequestError,
        match="doesn't support custom_llm_provider=anthropic for 'create_batch'",
    ):
        asyncio.run(create())


def test_provider_errors_are_ours_masked_and_only_safe_ones_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong = "sk-wrong-key-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    with FakeBatchAPI(api_key=FAKE_KEY) as fake:

        async def upload() -> None:
            async with BatchClient(MODEL, api_base=fake.api_base) as client:
                await client.upload("x.jsonl", b"{}\n")

        with pytest.raises(BatchProviderError) as refused:
            asyncio.run(upload())
        assert refused.value.kind == "auth" and not refused.value.retryable
        assert wrong not in str(refused.value) and "Incorrect API key" in str(refused.value)
        assert "OPENAI_API_KEY" in (refused.value.hint or "")
        assert fake.counts == Counter(upload=1)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with FakeBatchAPI(api_key=FAKE_KEY) as fake:
        fake.push_http_fault(
            "upload", Reply(status=429, content="slow down", headers={"retry-after": "0"})
        )
        fake.push_http_fault("create", Reply(status=500, content="boom"))
        fake.push_http_fault("retrieve", Reply(status=503, content="busy"))

        async def steps() -> tuple[BatchProviderError, BatchStatus, list[BatchStatus]]:
            async with BatchClient(MODEL, api_base=fake.api_base, backoff=0.01) as client:
                uploaded = await client.upload("x.jsonl", b"{}\n")  # 429, then uploaded
                with pytest.raises(BatchProviderError) as failed:
                    await client.create(uploaded.id)
                batch = await client.create(uploaded.id, metadata={"judgepool_file": "f1"})
                status = await client.retrieve(batch.id)  # 503, then answered
                with pytest.raises(BatchProviderError) as missing:
                    await client.retrieve("batch-unknown")
                assert missing.value.kind == "not_found"
                assert client.calls == Counter(upload=2, create=2, retrieve=3)
                return failed.value, status, await client.find("judgepool_file", "f1")

        failed, status, found = asyncio.run(steps())
        assert fake.counts == Counter(upload=2, create=2, retrieve=3, list=1)
    # a 5xx on create may have created the batch: not retried, and the hint says what to check
    assert failed.kind == "server" and "paid twice" in (failed.hint or "")
    assert status.status == "validating"
    assert [b.id for b in found] == [status.id]  # a rerun can find what it created


def test_a_server_that_is_not_there_is_a_refused_connection() -> None:
    async def create() -> None:
        async with BatchClient(MODEL, api_base="http://127.0.0.1:9/v1", retries=0) as client:
            await client.create("file-x")

    with pytest.raises(BatchProviderError) as refused:
        asyncio.run(create())
    assert refused.value.kind == "connection_refused"
    assert "--api-base" in (refused.value.say(cli_words)[1] or "")  # the command line's
    assert "api_base" in (refused.value.hint or "")  # the library's words


def test_a_local_server_needs_no_openai_key_as_online(
    store: Store, fake: FakeBatchAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hosted_vllm online sends litellm's placeholder key (or $HOSTED_VLLM_API_KEY): so does
    the batch client, instead of failing for want of OPENAI_API_KEY."""
    monkeypatch.delenv("OPENAI_API_KEY")
    file = one_file(store, fake, "hosted_vllm/qwen-batch")
    done = cycle(fake, file, "hosted_vllm/qwen-batch")
    assert done.collected.counts() == Counter(ok=6)
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
