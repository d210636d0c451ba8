"""A jury and its canaries answered from a warm cache (issue 22, items 2 and 3): a second
database on the same cache gets every member's label, every combined label and every canary
rated, with no call, and keeps the FOOLED flag; what the judge prints is what it stored."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import canary_checks, fooled_judges
from tests.conftest import CliResult
from tests.fake_judges import gullible_reply, honest_reply
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import EXPECTED, collection_copy
from tests.test_jury import JURY, A, B, jury, labels_of

Cli = Callable[..., CliResult]


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(honest_reply) as a, FakeOpenAI(gullible_reply) as b:
        yield a, b


def _graded(store: Store, purpose: str) -> dict[str, dict[str, tuple[object, object]]]:
    return {
        who: {d: v[:2] for d, v in labels_of(store, who, purpose).items()} for who in (A, B, JURY)
    }


def test_a_jury_and_its_canaries_from_the_cache_label_and_rate_everything(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    servers: tuple[FakeOpenAI, FakeOpenAI],
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = servers
    members = [("openai/a", a), ("openai/b", b)]
    first = collection_copy(tmp_path_factory, tmp_path / "first.duckdb")
    monkeypatch.setenv("JUDGEPOOL_DB", str(first.path))
    paying = jury(cli, members)
    assert paying.code == 0, paying.err
    paid = (a.calls, b.calls)
    holes, canaries = _graded(first, "label"), _graded(first, "canary")
    assert len([v for v in holes[JURY].values() if v[1] == "ok"]) == len(EXPECTED)
    assert canaries[JURY] and all(v[1] == "ok" for v in canaries[JURY].values())
    fooled = {r.labeller for r in fooled_judges(first, "chunk")}
    assert fooled == {JURY}  # the gullible member moves the median over the threshold

    # a fresh copy of the base database, the same (warm) cache: nothing to pay, all to write
    second = collection_copy(tmp_path_factory, tmp_path / "second.duckdb")
    monkeypatch.setenv("JUDGEPOOL_DB", str(second.path))
    cached = jury(cli, members)
    assert cached.code == 0, cached.err
    assert (a.calls, b.calls) == paid
    assert _graded(second, "label") == holes
    assert _graded(second, "canary") == canaries
    assert f"{len(EXPECTED)} pairs combined by median" in cached.out
    assert "FOOLED BY CANARIES" in cached.out
    checks = canary_checks(second)
    for who in (A, B, JURY):
        assert checks[who].canaries_graded == len(canaries[who]) > 0
        assert checks[who].kinds == canary_checks(first)[who].kinds
    assert {r.labeller for r in fooled_judges(second, "chunk")} == fooled
    report = cli("eval", "--format", "json")
    assert report.code == 0 and "fooled" in report.out.lower()
