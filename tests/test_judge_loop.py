"""The labelling loop end to end: real litellm, a real HTTP server, a real database and cache.

Every test counts the server's calls exactly: one call per distinct text, none for a cache hit,
one more after an unparsed answer, `retries + 1` for a pair that keeps failing, and none past
a budget cap.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.judge.loop import LoopOptions, LoopStats
from judgepool.judge.run.plan import Plan, backfill, plan_holes
from judgepool.pooling.pool import PoolSpec, list_holes
from judgepool.pooling.store.connection import Store
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply
from tests.fixtures_servers import FAKE_KEY
from tests.judge_fixtures import CHUNKS, EXPECTED, collection_copy

Writer = Callable[[str, str | bytes], Path]
TEXTS = {d: t for d, _, t in CHUNKS}
FAST = LoopOptions(concurrency=4, backoff_base=0.01, timeout=5.0)


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


def run(
    store: Store,
    fake: FakeOpenAI,
    options: LoopOptions = FAST,
    plan: Plan | None = None,
    model: str = "openai/fake-model",
    **settings: Any,
) -> LoopStats:
    judge = LLMJudge(LLMSettings(model=model, api_base=fake.api_base, **settings))
    with JudgeCache() as cache:
        return backfill(store, judge, plan or plan_holes(store, depth=10), options, cache)


def labels(store: Store, where: str = "source = 'judge'") -> list[dict[str, Any]]:
    with store.read() as con:
        cursor = con.execute(f"SELECT * FROM judgments WHERE {where} ORDER BY id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_every_hole_is_labelled_once_and_one_text_costs_one_call(
    store: Store, fake: FakeOpenAI
) -> None:
    stats = run(store, fake)
    assert fake.calls == 6  # 7 requests, c5 and c6 share one text
    assert set(fake.by_passage.values()) == {1}
    assert stats.outcomes == Counter({"ok": 7, "no_text": 1})
    assert (stats.calls, stats.cached, stats.shared, stats.done, stats.total) == (6, 0, 1, 8, 8)
    rows = labels(store)
    ok = {r["doc_id"]: r["grade"] for r in rows if r["status"] == "ok"}
    assert ok == EXPECTED
    assert [(r["doc_id"], r["status"], r["note"]) for r in rows if r["status"] != "ok"] == [
        ("c9", "no_text", "no passage text")
    ]
    assert stats.labels_written == len(rows) == 8
    assert [(h.qid, h.doc_id) for h in list_holes(store, PoolSpec(depth=10))] == [("q2", "c9")]
    shared = [json.loads(r["provenance"]) for r in rows if r["doc_id"] in ("c5", "c6")]
    assert sorted(bool(p.get("cache", {}).get("hit")) for p in shared) == [False, True]
    again = run(store, fake)  # nothing left but the hole without text: no call, no new label
    assert fake.calls == 6 and again.outcomes == Counter({"no_text": 1})
    assert len(labels(store)) == 8


def test_a_cache_hit_is_free_and_keeps_its_original_provenance(
    store: Store, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    run(store, fake)
    first = {r["doc_id"]: r for r in labels(store, "source = 'judge' AND status = 'ok'")}
    other = collection_copy(tmp_path_factory, tmp_path / "second.duckdb")
    stats = run(other, fake)
    assert fake.calls == 6  # the second database was filled from the cache alone
    assert (stats.calls, stats.cached) == (0, 7)
    for row in labels(other, "source = 'judge' AND status = 'ok'"):
        original = first[row["doc_id"]]
        provenance = json.loads(row["provenance"])
        before = json.loads(original["provenance"])
        assert row["grade"] == original["grade"]
        assert row["raw_output"] == original["raw_output"]
        assert row["cost"] == 0.0
        assert provenance["cache"]["hit"] is True
        assert provenance["judged_at"] == before["judged_at"]
        assert provenance["template"] == before["template"]
        assert provenance["cache_key"] == before["cache_key"]


@pytest.mark.parametrize(
    ("model", "settings"),
    [
        ("openai/fake-model-2", {}),
        ("openai/fake-model", {"temperature": 0.5}),
        ("openai/fake-model", {"max_tokens": 32}),
    ],
)
def test_another_model_or_parameter_misses_the_cache(
    store: Store,
    fake: FakeOpenAI,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    model: str,
    settings: dict[str, Any],
) -> None:
    run(store, fake)
    other = collection_copy(tmp_path_factory, tmp_path / "second.duckdb")
    stats = run(other, fake, model=model, **settings)
    assert (fake.calls, stats.cached) == (12, 0)


def test_an_unparsed_answer_is_stored_asked_once_more_and_stays_a_hole(
    store: Store, fake: FakeOpenAI
) -> None:
    def reply(request: FakeRequest) -> Reply:
        if "Kettles" in request.passage:
            return Reply("I'm sorry, I can't assess kitchen equipment.")
        return default_reply(request)

    fake.reply = reply
    stats = run(store, fake)
    kettle = [r for r in labels(store) if r["doc_id"] == "c3"]
    assert [r["status"] for r in kettle] == ["unparsed", "unparsed"]
    assert all(r["grade"] is None and "kitchen" in r["raw_output"] for r in kettle)
    assert fake.calls == 7 and stats.outcomes["unparsed"] == 1
    assert ("q1", "c3") in [(h.qid, h.doc_id) for h in list_holes(store, PoolSpec(depth=10))]


def test_a_second_answer_can_fill_the_hole(store: Store, fake: FakeOpenAI) -> None:
    fake.reply = lambda r: Reply("Hmm.") if fake.by_passage[r.passage] == 1 else default_reply(r)
    stats = run(store, fake)
    assert fake.calls == 12 and stats.outcomes["ok"] == 7
    assert Counter(r["status"] for r in labels(store)) == Counter(
        {"unparsed": 7, "ok": 7, "no_text": 1}
    )
    assert [(h.qid, h.doc_id) for h in list_holes(store, PoolSpec(depth=10))] == [("q2", "c9")]


def test_429_retry_after_is_honoured_and_counted(store: Store, fake: FakeOpenAI) -> None:
    fake.latency = 0.3  # the answers come well after the 429, within its pause
    fake.push(Reply(status=429, headers={"retry-after-ms": "400"}))
    stats = run(store, fake)
    assert (fake.calls, stats.rate_limited, stats.outcomes["ok"]) == (7, 1, 7)
    limited_at = next(t for t, status, _ in fake.log if status == 429)
    # Nothing new is sent for 0.4 s: the 429 is the judge's first answer (the others take
    # fake.latency), so every call before the pause ends is one of the first wave, sent before
    # the 429 came back: at most --concurrency of them, however late a loaded machine lets
    # them land (a 50 ms bound on their arrival failed under load).
    assert fake.latency >= 0.3
    early = [t for t, _, _ in fake.log if t < limited_at + 0.39]
    assert len(early) <= FAST.concurrency
    assert any(t - limited_at >= 0.39 for t, _, _ in fake.log)


def test_cache_hits_are_claimed_and_labelled_in_one_transaction(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, store: Store, fake: FakeOpenAI
) -> None:
    """Issue 23.3: a run answered from the cache opens the database once for its labels and
    claims (it opened it three times: claims, labels, releases; each opening is ~20 ms of CPU)."""
    run(store, fake)  # fills the cache
    second = collection_copy(tmp_path_factory, tmp_path / "second.duckdb")
    stats = run(second, fake)
    assert fake.calls == 6  # nothing asked again
    assert (stats.cached, stats.outcomes["ok"], stats.transactions) == (7, 7, 1)
    rows = labels(second, "source = 'judge' AND status = 'ok'")
    assert stats.labels_written == 8 and len(rows) == 7  # and the no_text mark
    assert all(json.loads(r["provenance"])["cache"]["hit"] for r in rows)
    with second.read() as con:
        assert con.execute("SELECT count(*) FROM claims").fetchone() == (0,)


def test_server_errors_are_retried_then_labelled_error(store: Store, fake: FakeOpenAI) -> None:
    fake.reply = lambda r: Reply(status=500) if "Paris" in r.passage else default_reply(r)
    stats = run(store, fake, LoopOptions(concurrency=4, retries=2, backoff_base=0.01))
    assert fake.by_passage[next(p for p in fake.by_passage if "Paris" in p)] == 3
    assert fake.calls == 6 + 2 and stats.retried == 2
    paris = [r for r in labels(store) if r["doc_id"] == "c10"]
    assert [(r["status"], r["grade"]) for r in paris] == [("error", None)]
    assert paris[0]["note"].startswith("server:")
    assert json.loads(paris[0]["provenance"])["error"] == {"kind": "server", "attempts": 3}
    assert stats.outcomes == Counter({"ok": 6, "error": 1, "no_text": 1})


def test_calls_that_hang_time_out_and_are_retried(store: Store, fake: FakeOpenAI) -> None:
    fake.push(Reply(hang=True))
    stats = run(store, fake, LoopOptions(concurrency=2, timeout=0.5, backoff_base=0.01))
    assert (fake.calls, stats.retried, stats.outcomes["ok"]) == (7, 1, 7)


def test_max_calls_stops_cleanly_before_the_cap(store: Store, fake: FakeOpenAI) -> None:
    stats = run(store, fake, LoopOptions(concurrency=2, max_calls=3))
    assert fake.calls == 3 and stats.stopped == "max-calls"
    assert stats.outcomes["ok"] == 3 and stats.outcomes["not_attempted"] == 4
    assert Counter(r["status"] for r in labels(store)) == Counter({"ok": 3, "no_text": 1})


def test_max_cost_is_never_exceeded(store: Store, fake: FakeOpenAI) -> None:
    judge = LLMJudge(LLMSettings("openai/gpt-4o-mini", api_base=fake.api_base, max_tokens=64))
    plan = plan_holes(store, depth=10)
    worst = judge.estimate(plan.built.requests[:1]).max_cost
    assert worst is not None
    cap = 3.5 * worst
    with JudgeCache() as cache:
        stats = backfill(store, judge, plan, LoopOptions(concurrency=1, max_cost=cap), cache)
    spent = sum(r["cost"] for r in labels(store, "source = 'judge' AND status = 'ok'"))
    assert stats.stopped == "max-cost"
    assert spent == pytest.approx(stats.cost)
    assert 0 < spent <= cap
    assert 3 <= fake.calls < 6  # worst cases are pessimistic: at least 3 fit, not all 6


def test_an_unpriced_model_cannot_be_capped_by_cost(store: Store, fake: FakeOpenAI) -> None:
    from judgepool.errors import UsageError
    from judgepool.reports.command_line import cli_words

    with pytest.raises(UsageError, match="price is unknown") as caught:
        run(store, fake, LoopOptions(max_cost=1.0))
    assert "--max-calls" in (caught.value.say(cli_words)[1] or "")  # the command line's words
    assert "max_calls=N" in (caught.value.hint or "")  # the library's
    assert fake.calls == 0


def test_a_bad_key_stops_the_run_without_labels(store: Store, fake: FakeOpenAI) -> None:
    fake.reply = lambda r: Reply(status=401, content="invalid api key")
    stats = run(store, fake, LoopOptions(concurrency=2))
    assert stats.fatal is not None and "refused the key" in str(stats.fatal)
    assert stats.stopped == "judge error"
    assert fake.calls <= 2
    assert Counter(r["status"] for r in labels(store)) == Counter({"no_text": 1})


def test_provenance_is_complete_and_no_key_is_stored_anywhere(
    store: Store,
    fake: FakeOpenAI,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    fake.usage = (120, 6)
    run(store, fake, LoopOptions(concurrency=3), model="openai/gpt-4o-mini")
    row = next(r for r in labels(store) if r["doc_id"] == "c1")
    provenance = json.loads(row["provenance"])
    assert provenance["model"] == "openai/gpt-4o-mini"
    assert provenance["api_base_host"] == f"127.0.0.1:{fake.port}"
    assert provenance["template"]["version"] == "relevance-v1"
    assert provenance["template"]["hash"].startswith("sha256:")
    assert provenance["parameters"] == {"temperature": 0.0, "max_tokens": 256}
    assert provenance["parser_version"] == "1"
    assert provenance["answer"]["parse"] == "last-line"
    assert provenance["shown"] == [{"doc_id": "c1", "start": 0, "end": len(TEXTS["c1"])}]
    assert provenance["truncated"] is False and provenance["judged_at"]
    assert provenance["cache_key"].startswith("judge1:")
    assert (row["tokens_in"], row["tokens_out"]) == (120, 6)
    assert row["cost"] > 0 and row["latency_s"] > 0 and row["created_at"] is not None
    assert row["raw_output"].endswith("##final score: 3")
    assert row["labeller"] == "openai/gpt-4o-mini@relevance-v1"
    # the key did reach the server, so finding it nowhere below means something
    assert {q.headers.get("authorization") for q in fake.requests} == {f"Bearer {FAKE_KEY}"}
    out, err = capfd.readouterr()
    key = FAKE_KEY.encode()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key not in path.read_bytes(), path
    assert FAKE_KEY not in out + err + caplog.text
