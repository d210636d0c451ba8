"""`judgepool judge --batch`, `--batch-status`, `--batch-collect`, `--batch-cancel` (issue 14).

Every test drives the real CLI and the real litellm client against a real HTTP server on
127.0.0.1 (tests/fake_openai_batch.py; tests/fake_openai.py for the online judge) and counts
its requests per route exactly. The collection (tests/judge_fixtures.py) has 8 holes: 7 with
text (6 distinct texts: c5 and c6 share one) and c9 without.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judgepool.judge.batch.support import batch_rates
from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply
from tests.fake_openai_batch import FakeBatchAPI, LineFault
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
FAKE_KEY = "sk-judgepool-batch-KEY-5e8a1c7d9b3f"
MODEL = "openai/gpt-4o-mini"
LABELLER = f"{MODEL}@relevance-v1"


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


def batch(fake: FakeBatchAPI, *extra: str) -> list[str]:
    return ["judge", "--model", MODEL, "--api-base", fake.api_base, *extra]


def labels(store: Store) -> list[tuple[str, str, int | None, float | None, str | None]]:
    """(doc_id, status, grade, cost, note) of the judge's labels, in order."""
    with store.read() as con:
        rows = con.execute(
            "SELECT doc_id, status, grade, cost, note FROM judgments WHERE source = 'judge' "
            "ORDER BY id"
        ).fetchall()
    return [(str(d), str(s), g, c, n) for d, s, g, c, n in rows]


def claim_holders(store: Store) -> Counter[str]:
    with store.read() as con:
        return Counter(str(h) for (h,) in con.execute("SELECT holder FROM claims").fetchall())


def batch_id(out: str) -> str:
    found = re.search(r"\b(batch-fake\d+)\b", out)
    assert found, out
    return found.group(1)


def test_dry_run_shows_holes_cache_files_and_both_prices_without_a_key(
    store: Store, fake: FakeBatchAPI, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    result = cli(*batch(fake, "--batch", "--dry-run"))
    assert result.code == 0, result.err
    out = result.out
    assert re.search(r"holes\s+8\b", out) and re.search(r"without text\s+1\b", out)
    assert re.search(r"to send\s+7\s+6 requests", out)
    assert re.search(r"batch files: 1 \(6 requests / 1\d\.\d kB\); limits: OpenAI batch guide", out)
    prices = re.search(
        r"estimated cost: \$(\d\.\d+) at batch price \(litellm batch price\), "
        r"worst case \$(\d\.\d+); online it would be \$(\d\.\d+)",
        out,
    )
    assert prices, out
    at_batch, worst, online = (float(p) for p in prices.groups())
    assert at_batch == pytest.approx(online / 2, abs=1e-4) and worst > at_batch > 0
    assert "a real run would stop here: no key for openai/gpt-4o-mini" in result.err
    assert fake.counts == Counter() and labels(store) == []  # nothing sent, nothing written


@pytest.mark.slow
def test_submit_status_collect_with_exact_requests_costs_at_batch_price(
    store: Store, fake: FakeBatchAPI, cli: Cli
) -> None:
    sent = cli(*batch(fake, "--batch"))
    assert sent.code == 0, sent.err
    assert fake.counts == Counter(upload=1, create=1)
    assert f"judge: {LABELLER} as a batch; 8 holes at depth 10 (chunk level)" in sent.err
    ident = batch_id(sent.out)
    assert f"judgepool --db {store.path} judge --batch-status" in sent.out
    assert "--batch-collect" in sent.out and "within 24 h" in sent.out
    assert "labelled now: 1 pairs without text (no_text), 0 from the cache" in sent.out
    assert labels(store) == [("c9", "no_text", None, None, "no passage text")]
    assert claim_holders(store) == Counter({f"batch:{ident}": 6})  # one claim per text

    status = cli("judge", "--batch-status")  # the batch knows its model and server
    assert status.code == 0, status.err
    assert re.search(rf"{ident}\s+validating\s+6\s+0\s+0\s+7\s+{MODEL}", status.out)
    assert fake.counts == Counter(upload=1, create=1, retrieve=1)

    early = cli("judge", "--batch-collect")  # in progress: nothing collected
    assert early.code == 0, early.err
    assert f"{ident} is in_progress (3 of 6 requests done)" in early.out
    assert "the provider answers within 24 h, by" in early.out and "again then" in early.out
    assert fake.counts == Counter(upload=1, create=1, retrieve=2)
    assert len(labels(store)) == 1

    done = cli("judge", "--batch-collect")
    assert done.code == 0, done.err
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
    assert f"collected 1 batch: {ident} (completed)" in done.out
    assert re.search(r"ok\s+7", done.out)
    written = labels(store)[1:]
    assert {d: g for d, _, g, _, _ in written} == EXPECTED and len(written) == 7
    assert claim_holders(store) == Counter()  # released with the labels
    # cost at batch price: half of what the online price map says for the same tokens
    judge = LLMJudge(LLMSettings(model=MODEL))
    rates = batch_rates(MODEL)
    assert rates is not None
    with store.read() as con:
        rows = con.execute(
            "SELECT doc_id, cost, tokens_in, tokens_out, provenance->>'$.answer.batch.id', "
            "provenance->>'$.answer.batch.custom_id', provenance->>'$.answer.price_basis' "
            "FROM judgments WHERE status = 'ok' ORDER BY id"
        ).fetchall()
    paid = [r for r in rows if r[1]]
    shared = {r[0] for r in rows if r[1] == 0}  # c5 and c6 have one text: one of them paid
    assert len(paid) == 6 and len(shared) == 1 and shared < {"c5", "c6"}
    for _, cost, tokens_in, tokens_out, bid, custom_id, basis in paid:
        online = judge.price(tokens_in, tokens_out)
        assert online is not None and cost == pytest.approx(online / 2, rel=1e-12)
        assert (bid, basis) == (ident, "litellm batch price") and custom_id.startswith("jp1-")
    total = sum(r[1] for r in paid)
    assert f"cost ${total:.4f} at batch price" in done.out
    # judged@10 before and after (A keeps c9, which has no text)
    assert re.search(r"A\s+0\.361\s+0\.889\s+1\nB\s+0\.444\s+1\.000\s+0", done.out)

    again = cli("judge", "--batch-collect")  # a no-op: not even a request
    assert again.code == 0 and "nothing to collect" in again.out
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
    assert len(labels(store)) == 8
    listed = cli(*batch(fake, "--batch-status"))  # collected batches are not asked about
    assert re.search(rf"{ident}\s+completed\s+6\s+6\s+0\s+7", listed.out)
    assert fake.counts["retrieve"] == 3


@pytest.mark.slow
def test_the_cache_serves_a_later_online_run_of_the_same_pairs_with_zero_calls(
    store: Store,
    fake: FakeBatchAPI,
    cli: Cli,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    assert cli(*batch(fake, "--batch", "--wait", "--poll", "0.01")).code == 0
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
    other = collection_copy(tmp_path_factory, tmp_path / "other.duckdb")
    with FakeOpenAI() as online:
        result = cli(
            "--db",
            other.path,
            "judge",
            "--model",
            MODEL,
            "--api-base",
            online.api_base,
            "--no-progress",
            "--no-canaries",
        )  # holes' calls only
        assert result.code == 0, result.err
        assert online.calls == 0
    assert "0 calls" in result.out and "7 pairs from the cache" in result.out
    assert {d: g for d, s, g, _, _ in labels(other) if s == "ok"} == EXPECTED


@pytest.mark.slow
def test_an_online_judge_skips_pairs_an_open_batch_holds_and_a_second_batch_too(
    store: Store, fake: FakeBatchAPI, cli: Cli
) -> None:
    sent = cli(*batch(fake, "--batch"))
    ident = batch_id(sent.out)
    with FakeOpenAI() as online:
        result = cli(
            "judge",
            "--model",
            MODEL,
            "--api-base",
            online.api_base,
            "--no-progress",
        )
        assert online.calls == 0  # canaries too: the judge answered no hole, it plants none
    assert result.code == 0, result.err
    assert re.search(r"in an open batch\s+7", result.out)
    assert f"7 pairs are in open batches (batch:{ident}) and were not sent again" in result.out
    dry = cli(*batch(fake, "--batch", "--dry-run"))
    assert re.search(rf"in an open batch or held\s+7\s+batch:{ident}", dry.out), dry.out
    again = cli(*batch(fake, "--batch"))
    assert again.code == 0, again.err
    assert (
        "nothing sent" in again.out
        and f"7 pairs are in open batches or being judged (batch:{ident})" in again.out
    )
    assert fake.counts == Counter(upload=1, create=1)
    assert len(labels(store)) == 1  # only c9's no_text


def _faulty(request: FakeRequest) -> Reply:
    if "Kettles" in request.passage:
        return Reply(status=500, content="the model is overloaded")
    if "Paris" in request.passage:
        return Reply("I would rather not say.")
    return default_reply(request)


def _fault(custom_id: str, request: FakeRequest) -> LineFault | None:
    if "Hamlet" in request.passage:
        return LineFault("error", "server_error", "request failed")
    if "altitude" in request.passage:
        return LineFault("missing")
    return None


@pytest.mark.slow
def test_failed_missing_and_unparsed_lines_stay_holes_and_retry_failed_sends_them_again(
    store: Store, cli: Cli
) -> None:
    with FakeBatchAPI(reply=_faulty, fault=_fault) as fake:
        assert cli(*batch(fake, "--batch")).code == 0
        done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
        assert done.code == 4, done.err
        assert "4 of 7 pairs collected failed and are still holes" in done.err
        assert "--retry-failed" in done.err
        assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=2)
        found = {d: (s, g) for d, s, g, _, _ in labels(store)}
        assert found == {
            "c1": ("ok", 3),
            "c5": ("ok", 2),
            "c6": ("ok", 2),
            "c3": ("error", None),
            "c7": ("error", None),
            "c2": ("error", None),
            "c10": ("unparsed", None),
            "c9": ("no_text", None),
        }
        notes = {d: n for d, _, _, _, n in labels(store)}
        assert (notes["c3"] or "").startswith("http_500: the model is overloaded (batch ")
        assert (notes["c2"] or "").startswith("missing: ")
        # the failures stay holes, never 0
        assert re.search(r"A\s+0\.361\s+0\.\d+\s+[3-9]", done.out), done.out
        fake.reply, fake.fault = default_reply, None
        retried = cli(*batch(fake, "--batch-collect", "--retry-failed"))
        assert retried.code == 0, retried.err
        assert fake.counts == Counter(upload=2, create=2, retrieve=3, content=2)
        assert "sent 1 batch: 4 requests for 4 pairs" in retried.out
        last = list(fake.batches.values())[-1]
        assert fake.files[last.input_file_id].data.count(b"\n") == 4
        final = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
        assert final.code == 0, final.err
    ok = {d: g for d, s, g, _, _ in labels(store) if s == "ok"}
    assert ok == EXPECTED


@pytest.mark.slow
def test_retry_failed_with_wait_waits_for_the_new_batch_and_collects_it(
    store: Store, cli: Cli
) -> None:
    with FakeBatchAPI(reply=_faulty, fault=_fault) as fake:
        assert cli(*batch(fake, "--batch")).code == 0
        done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
        assert done.code == 4, done.err
        fake.reply, fake.fault = default_reply, None
        retried = cli(*batch(fake, "--batch-collect", "--retry-failed", "--wait", "--poll", "0.01"))
        assert retried.code == 0, retried.err
        assert "sent 1 batch: 4 requests for 4 pairs" in retried.out
        assert fake.counts["create"] == 2 and fake.counts["content"] == 3  # the new one, collected
        assert not [b for b in fake.batches.values() if b.status != "completed"]
    ok = {d: g for d, s, g, _, _ in labels(store) if s == "ok"}
    assert ok == EXPECTED  # no further command needed


@pytest.mark.slow
def test_an_expired_batch_labels_what_it_did_and_the_rest_stay_holes(
    store: Store, cli: Cli
) -> None:
    with FakeBatchAPI(expire_after=2) as fake:
        assert cli(*batch(fake, "--batch")).code == 0
        done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
        assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=2)
    assert done.code == 4, done.err
    found = Counter((s, n.split(":")[0] if n else None) for _, s, _, _, n in labels(store))
    ok = found[("ok", None)]
    assert ok in (2, 3) and found[("error", "batch_expired")] == 7 - ok
    assert "batch_expired" in done.out and all(
        g != 0 or s == "ok" for _, s, g, _, _ in labels(store)
    )


@pytest.mark.slow
def test_a_cancelled_batch_keeps_what_it_answered_and_frees_the_rest(
    store: Store, cli: Cli
) -> None:
    with FakeBatchAPI(polls_validating=0, polls_in_progress=2) as fake:
        ident = batch_id(cli(*batch(fake, "--batch")).out)
        assert "in_progress" in cli(*batch(fake, "--batch-status")).out
        cancelled = cli(*batch(fake, "--batch-cancel", ident))
        assert cancelled.code == 0, cancelled.err
        assert f"batch {ident}: cancelling" in cancelled.out
        done = cli(*batch(fake, "--batch-collect"))
        assert fake.counts == Counter(upload=1, create=1, retrieve=2, cancel=1, content=1)
    assert done.code == 0, done.err
    assert "were not answered before the cancel: they are holes again" in done.out
    assert claim_holders(store) == Counter()
    statuses = Counter(s for _, s, _, _, _ in labels(store))
    assert statuses == Counter(ok=statuses["ok"], no_text=1) and statuses["ok"] >= 2
    refused = cli(*batch(fake, "--batch-cancel", ident))
    assert refused.code == 2 and "was collected already" in refused.err


def test_cancelling_a_batch_twice_says_so_and_asks_nothing(store: Store, cli: Cli) -> None:
    with FakeBatchAPI(polls_validating=0, polls_in_progress=1) as fake:
        ident = batch_id(cli(*batch(fake, "--batch")).out)
        assert cli(*batch(fake, "--batch-cancel", ident)).code == 0
        again = cli(*batch(fake, "--batch-cancel", ident))
        assert again.code == 2, again.err
        assert f"batch {ident} is being cancelled already: nothing to cancel" in again.err
        assert "--batch-collect" in again.err
        assert fake.counts == Counter(upload=1, create=1, cancel=1)  # asked nothing twice


@pytest.mark.slow
def test_cancelling_a_batch_that_finished_since_we_last_looked_says_so(
    store: Store, cli: Cli
) -> None:
    with FakeBatchAPI(polls_validating=0, polls_in_progress=0) as fake:
        ident = batch_id(cli(*batch(fake, "--batch")).out)
        # it finished at the provider after we last looked: the provider refuses the cancel
        fake.push_http_fault(
            "cancel", Reply(status=409, content="Cannot cancel a batch with status completed.")
        )
        late = cli(*batch(fake, "--batch-cancel", ident))
        assert late.code == 2, late.err
        assert f"batch {ident} is completed: nothing to cancel" in late.err
        assert "collect it with: judgepool judge --batch-collect" in late.err
        assert fake.counts == Counter(upload=1, create=1, cancel=1, retrieve=1)
        collected = cli(*batch(fake, "--batch-collect"))
        assert collected.code == 0, collected.err
        assert f"collected 1 batch: {ident} (completed)" in collected.out


def test_max_cost_sends_only_what_fits_at_batch_price_and_exits_6(
    store: Store, fake: FakeBatchAPI, cli: Cli
) -> None:
    dry = cli(*batch(fake, "--batch", "--dry-run"))
    worst = float(re.search(r"worst case \$(\d\.\d+)", dry.out).group(1))  # type: ignore[union-attr]
    result = cli(*batch(fake, "--batch", "--max-cost", f"{worst / 2:.6f}"))
    assert result.code == 6, result.err
    assert "pairs were not sent: their worst case would exceed --max-cost" in result.err
    sent = next(iter(fake.files.values())).data.count(b"\n")
    assert 0 < sent < 6 and fake.counts == Counter(upload=1, create=1)


@pytest.mark.parametrize(
    ("model", "said"),
    [
        (
            "anthropic/claude-3-5-haiku-latest",
            "no batch API for anthropic/claude-3-5-haiku-latest: "
            "litellm 1.110.2 cannot create Anthropic message batches",
        ),
        ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "returns Bedrock's own output records"),
        ("offline", "is the local offline judge"),
    ],
)
def test_a_provider_without_batches_is_refused_with_what_to_do(
    store: Store, cli: Cli, model: str, said: str
) -> None:
    result = cli("judge", "--batch", "--model", model)
    assert result.code != 0 and said in result.err, result.err
    assert result.err.startswith("error: ") and "without --batch" in result.err
    assert labels(store) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--batch", "--batch-collect"], "--batch and --batch-collect cannot be combined"),
        (["--retry-failed"], "--retry-failed goes with --batch-collect"),
        (["--batch-status", "--wait"], "--wait goes with --batch or --batch-collect"),
        (["--batch", "--concurrency", "4"], "--concurrency apply to the online judge"),
        (["--batch-collect", "--dry-run"], "--dry-run does not go with --batch-collect"),
        (["--batch", "--model", "openai/gpt-4o"], "a jury (--model given twice"),
        (["--batch", "--num-samples", "3"], "a jury (--model given twice"),
    ],
)
def test_options_that_cannot_go_together_are_refused(
    store: Store, cli: Cli, args: list[str], said: str
) -> None:
    result = cli("judge", "--model", MODEL, *args)
    assert result.code == 2 and said in result.err, result.err


@pytest.mark.slow
def test_the_library_submits_lists_collects_and_cancels(store: Store, fake: FakeBatchAPI) -> None:
    import judgepool as jp

    db = jp.open(store.path)
    forecast = db.submit_batch(MODEL, api_base=fake.api_base, dry_run=True)
    assert forecast.dry_run and forecast.requests == 6 and forecast.pairs == 7
    assert forecast.cost["batch"] is not None and fake.counts == Counter()
    sent = db.submit_batch(MODEL, api_base=fake.api_base)
    assert sent.problem is None and sent.batches["status"].to_list() == ["validating"]
    ident = sent.batches["batch_id"][0]
    listed = db.batches()
    assert listed["batch_id"].to_list() == [ident] and listed["pairs"].to_list() == [7]
    early = db.collect_batches()
    assert early.open["batch_id"].to_list() == [ident] and early.outcomes == {}
    done = db.collect_batches(wait=True, poll=0.01)
    assert done.outcomes == {"ok": 7} and done.problem is None and done.cost
    assert done.judged["judged_after"].to_list() == [pytest.approx(8 / 9), 1.0]
    assert fake.counts == Counter(upload=1, create=1, retrieve=3, content=1)
    with pytest.raises(jp.errors.UsageError, match="collected already"):
        db.cancel_batch(ident)


def test_the_library_refuses_options_a_batch_does_not_take(store: Store) -> None:
    import judgepool as jp

    with pytest.raises(jp.errors.UsageError, match="unknown batch option"):
        jp.open(store.path).submit_batch(MODEL, concurrency=4)


def _twice_and_strays(custom_id: str, request: FakeRequest) -> LineFault | None:
    if "Water boils" in request.passage:  # c1, grade 3: answered again with 1
        return LineFault("again", "1")
    if "Salt water" in request.passage:  # c5 and c6 (one request), grade 2: again with 2
        return LineFault("again", "2")
    if "Hamlet" in request.passage:  # c7: answered, plus a line for an id never sent
        return LineFault("stray", "jp-never-sent-1")
    return None


@pytest.mark.slow
def test_answers_that_disagree_stay_holes_and_odd_lines_are_counted(store: Store, cli: Cli) -> None:
    """Issue 22.7: a custom_id answered twice with different grades kept the first silently,
    and a line for a custom_id never sent was ignored without a word."""
    with FakeBatchAPI(fault=_twice_and_strays, polls_validating=0, polls_in_progress=0) as fake:
        assert cli(*batch(fake, "--batch")).code == 0
        done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
    assert done.code == 4, done.err
    assert "1 of 7 pairs collected failed and are still holes (1 conflicting_answers)" in done.err
    assert (
        "failed: 1 pairs: conflicting_answers: answered 2 times with different grades (1, 3): "
        "kept as a hole, not a choice"
    ) in done.out
    assert "output lines for custom_ids these batches never sent: 1 (jp-never-sent-1)" in done.out
    assert "output lines repeating a request already answered: 2" in done.out
    assert "requests answered with different grades: 1; their pairs stay holes" in done.out
    found = {d: (s, g) for d, s, g, _, _ in labels(store)}
    assert found == {
        "c1": ("error", None),  # 3 or 1: neither is chosen
        "c2": ("ok", 2),
        "c3": ("ok", 1),
        "c5": ("ok", 2),  # the same grade twice: kept once
        "c6": ("ok", 2),
        "c7": ("ok", 3),
        "c10": ("ok", 3),
        "c9": ("no_text", None),
    }
    notes = {d: n for d, _, _, _, n in labels(store)}
    assert (notes["c1"] or "").startswith("conflicting_answers: answered 2 times")
    assert re.search(r"^ok\s+6$", done.out, re.M) and re.search(r"^error\s+1$", done.out, re.M)


def test_the_library_counts_odd_lines_of_a_batch(store: Store) -> None:
    import judgepool as jp

    db = jp.open(store.path)
    with FakeBatchAPI(fault=_twice_and_strays, polls_validating=0, polls_in_progress=0) as fake:
        db.submit_batch(MODEL, api_base=fake.api_base)
        done = db.collect_batches(wait=True, poll=0.01)
    assert done.odd_lines == {"unreadable": 0, "never_sent": 1, "repeated": 2, "conflicting": 1}
    assert done.outcomes == {"ok": 6, "error": 1}
    assert done.failures == {"conflicting_answers": 1}
    assert isinstance(done.problem, jp.errors.HolesFailedError)
