"""Several judges: two or three fake servers on 127.0.0.1 as the members of a jury, one model
asked K times, through the real CLI and the real litellm client."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.judge.jury import combine
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import judge_runs
from judgepool.pooling.store.judgments import effective_labels_sql
from tests.conftest import CliResult
from tests.fake_judges import gullible_reply, honest_reply
from tests.fake_openai import GRADE_MARK, FakeOpenAI, FakeRequest, Reply
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
A, B, C = "openai/a@relevance-v1", "openai/b@relevance-v1", "openai/c@relevance-v1"
JURY = f"jury({A},{B})@median"


def one_lower(request: FakeRequest) -> Reply:
    """A stricter judge: one grade under the passage's mark (never under 0)."""
    mark = GRADE_MARK.search(request.passage)
    grade = max(0, int(mark.group(1)) - 1) if mark else 0
    return Reply(f"##final score: {grade}")


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(honest_reply) as a, FakeOpenAI(one_lower) as b:
        yield a, b


def jury(cli: Cli, members: list[tuple[str, FakeOpenAI]], *extra: str) -> CliResult:
    args = ["judge", "--no-progress"]
    for model, server in members:
        args += ["--model", model, "--api-base", server.api_base]
    return cli(*args, *extra)


def labels_of(store: Store, labeller: str, purpose: str = "label") -> dict[str, tuple[Any, ...]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT doc_id, grade, status, provenance FROM judgments WHERE labeller = ? "
            "AND purpose = ? ORDER BY id",
            [labeller, purpose],
        ).fetchall()
    return {d: (g, s, json.loads(p)) for d, g, s, p in rows}


def effective(store: Store, labeller: str | None = None) -> dict[str, tuple[int, str]]:
    with store.read() as con:
        rows = con.execute(
            f"SELECT doc_id, grade, labeller FROM ({effective_labels_sql('chunk', labeller)}) "
            "WHERE source = 'judge'"
        ).fetchall()
    return {d: (g, lab) for d, g, lab in rows}


@pytest.mark.slow
def test_two_models_are_a_jury(
    store: Store, servers: tuple[FakeOpenAI, FakeOpenAI], cli: Cli
) -> None:
    a, b = servers
    result = jury(cli, [("openai/a", a), ("openai/b", b)], "--no-canaries")
    assert result.code == 0, result.err
    assert (a.calls, b.calls) == (6, 6)  # each member: one call per distinct text
    combined = labels_of(store, JURY)
    lower = {d: max(0, g - 1) for d, g in EXPECTED.items()}
    assert {d: v[0] for d, v in combined.items() if v[1] == "ok"} == lower
    assert combined["c9"][1] == "no_text"
    grade, _, provenance = combined["c1"]
    assert grade == 2
    members = {m["labeller"]: m["grade"] for m in provenance["members"]}
    assert members == {A: 3, B: 2} and provenance["combine"] == "median"
    assert provenance["tie"] == "broken towards the lower grade"
    with store.read() as con:
        ids = dict(
            con.execute(
                "SELECT labeller, id FROM judgments WHERE doc_id = 'c1' AND labeller IN (?, ?)",
                [A, B],
            ).fetchall()
        )
    assert {m["labeller"]: m["judgment_id"] for m in provenance["members"]} == ids
    assert {d: v[0] for d, v in labels_of(store, A).items() if v[1] == "ok"} == EXPECTED
    # the jury's label counts by default; a member's under --judge MEMBER
    assert effective(store) == {d: (g, JURY) for d, g in lower.items()}
    assert effective(store, A) == {d: (g, A) for d, g in EXPECTED.items()}
    out = result.out
    assert f"jury {JURY}: 7 pairs combined by median, 7 ties broken towards the lower grade" in out
    assert "Krippendorff's alpha (ordinal)" in out
    assert [(r.labeller, r.role) for r in judge_runs(store)] == [
        (A, "member"),
        (B, "member"),
        (JURY, "jury"),
    ]
    again = jury(cli, [("openai/a", a), ("openai/b", b)], "--no-canaries")
    assert again.code == 0 and (a.calls, b.calls) == (6, 6)  # only c9 (no text) is left


def test_a_later_single_judge_does_not_displace_the_jury(
    store: Store, servers: tuple[FakeOpenAI, FakeOpenAI], cli: Cli
) -> None:
    a, b = servers
    assert jury(cli, [("openai/a", a), ("openai/b", b)], "--no-canaries").code == 0
    # c labels the same pairs afterwards (its own holes): later, but not a jury
    late = cli(
        "judge",
        "--model",
        "openai/c",
        "--api-base",
        a.api_base,
        "--judge",
        C,
        "--no-canaries",
        "--no-progress",
    )
    assert late.code == 0, late.err
    assert {lab for _, lab in effective(store).values()} == {JURY}
    assert {lab for _, lab in effective(store, C).values()} == {C}


@pytest.mark.parametrize(("how", "expected"), [("majority", EXPECTED), ("mean", EXPECTED)])
def test_three_judges_majority_and_mean(
    store: Store,
    servers: tuple[FakeOpenAI, FakeOpenAI],
    cli: Cli,
    how: str,
    expected: dict[str, int],
) -> None:
    a, b = servers
    with FakeOpenAI(honest_reply) as c:
        result = jury(
            cli,
            [("openai/a", a), ("openai/b", b), ("openai/c", c)],
            "--combine",
            how,
            "--no-canaries",
        )
        assert result.code == 0, result.err
        assert (a.calls, b.calls, c.calls) == (6, 6, 6)
    name = f"jury({A},{B},{C})@{how}"
    combined = labels_of(store, name)
    # (g, g - 1, g): the majority is g; the mean g - 1/3 rounds to g
    assert {d: v[0] for d, v in combined.items() if v[1] == "ok"} == expected
    if how == "mean":
        assert combined["c1"][2]["mean"] == "8/3" and combined["c1"][2]["tie"] is None


@pytest.mark.slow
def test_one_model_asked_k_times(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    seen: Counter[str] = Counter()

    def varying(request: FakeRequest) -> Reply:  # 3, 2, 2, 3, 2, 2 ... per text
        seen[request.passage] += 1
        return Reply(f"##final score: {(3, 2, 2)[(seen[request.passage] - 1) % 3]}")

    with FakeOpenAI(varying) as server:
        args = (
            "judge",
            "--model",
            "openai/s",
            "--api-base",
            server.api_base,
            "--num-samples",
            "3",
            "--no-canaries",
            "--no-progress",
        )
        result = cli(*args)
        assert result.code == 0, result.err
        assert server.calls == 18  # 6 distinct texts x 3 samples: each its own request
        assert {r.body["temperature"] for r in server.requests} == {0.7}
        base = "openai/s@relevance-v1"
        combined = labels_of(store, f"jury({base} x3)@median")
        assert {v[0] for v in combined.values() if v[1] == "ok"} == {2}
        assert [m["labeller"] for m in combined["c1"][2]["members"]] == [
            f"{base}#1",
            f"{base}#2",
            f"{base}#3",
        ]
        with JudgeCache() as cache:
            assert len(cache) == 18  # the sample index is part of every key
        # the same samples on a fresh database come from the cache
        collection_copy(tmp_path_factory, tmp_path / "second.duckdb")
        again = cli("--db", tmp_path / "second.duckdb", *args)
        assert again.code == 0, again.err
        assert server.calls == 18


def test_wrong_combinations_are_refused_before_any_call(
    store: Store, servers: tuple[FakeOpenAI, FakeOpenAI], cli: Cli
) -> None:
    a, b = servers
    two = ["--model", "openai/a", "--model", "openai/b"]
    cases = [
        (
            [*two, "--api-base", a.api_base, "--api-base", b.api_base, "--api-base", a.api_base],
            "3 --api-base for 2 --model",
        ),
        ([*two, "--api-base", a.api_base, "--judge", A], "--judge does not apply"),
        (
            [
                "--model",
                "openai/a",
                "--api-base",
                a.api_base,
                "--num-samples",
                "2",
                "--temperature",
                "0",
            ],
            "every sample would repeat one answer",
        ),
        (
            ["--model", "openai/a", "--model", "openai/a", "--api-base", a.api_base],
            "--num-samples K",
        ),
    ]
    for args, message in cases:
        result = cli("judge", "--no-progress", *args)
        assert result.code == 2, (args, result.err)
        assert message in result.err
    assert a.calls == b.calls == 0


@pytest.mark.slow
def test_a_jury_shields_its_labels_from_a_fooled_member(
    store: Store, monkeypatch: pytest.MonkeyPatch, cli: Cli, write: Callable[..., Path]
) -> None:
    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.ingest_texts import ingest_docs

    zeros = [
        ("z2", "Giraffes eat leaves from tall trees. [[grade=0]]"),
        ("z3", "Copper conducts electricity well. [[grade=0]]"),
    ]
    ingest_docs(
        store,
        write("z.jsonl", "".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in zeros)),
    )
    ingest_qrels(store, write("z.txt", "q2 0 z2 0\nq3 0 z3 0\n"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(gullible_reply) as a, FakeOpenAI(honest_reply) as b:
        result = jury(cli, [("openai/a", a), ("openai/b", b)])
        assert result.code == 0, result.err
        assert (a.calls, b.calls) == (12, 12)  # 6 holes' texts + 6 canaries each
    verdicts = {r.labeller: r.fooled for r in judge_runs(store)}
    assert verdicts == {A: True, B: False, JURY: False}  # the median of (3, 0) is 0
    assert (
        f"FOOLED BY CANARIES: {A}" in result.out and f"FOOLED BY CANARIES: {JURY}" not in result.out
    )
    assert {v[0] for v in labels_of(store, JURY, "canary").values()} == {0}
    any_judge = json.loads(cli("compare", "A", "B", "--force", "--format", "json").out)
    assert any_judge["fooled_by_canaries"] == []  # the jury's labels count, not A's
    only_a = json.loads(cli("compare", "A", "B", "--force", "--judge", A, "--format", "json").out)
    assert [f["labeller"] for f in only_a["fooled_by_canaries"]] == [A]


@pytest.mark.slow
def test_a_cap_covers_the_whole_jury_and_a_rerun_finishes_it(
    store: Store, servers: tuple[FakeOpenAI, FakeOpenAI], cli: Cli
) -> None:
    a, b = servers
    members = [("openai/a", a), ("openai/b", b)]
    capped = jury(cli, members, "--no-canaries", "--max-calls", "8", "--concurrency", "1")
    assert capped.code == 6, capped.err  # a cap stopped it
    assert (a.calls, b.calls) == (6, 2)
    rerun = jury(cli, members, "--no-canaries")
    assert rerun.code == 0, rerun.err
    assert (a.calls, b.calls) == (6, 6)  # a's answers came from the cache
    lower = {d: max(0, g - 1) for d, g in EXPECTED.items()}
    assert effective(store) == {d: (g, JURY) for d, g in lower.items()}


def test_combining_breaks_ties_towards_the_lower_grade() -> None:
    assert combine([3, 2], "median") == combine([2, 3], "median")
    assert combine([3, 2], "median").grade == 2 and combine([3, 2], "median").tie
    assert combine([1, 2, 3], "median").grade == 2 and not combine([1, 2, 3], "median").tie
    assert combine([0, 3, 3, 0], "majority").grade == 0
    assert combine([0, 3, 3], "majority").grade == 3
    assert combine([1, 2], "mean").grade == 1 and combine([1, 2], "mean").tie
    assert combine([2, 3, 3], "mean").grade == 3 and combine([0, 0, 1], "mean").grade == 0
