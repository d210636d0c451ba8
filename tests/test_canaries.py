"""Canaries: planted pairs of true grade 0 that a gullible judge grades high and an honest one
does not, through the real CLI, the real litellm client and fake servers on 127.0.0.1."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgepool.errors import UsageError
from judgepool.judge.canaries import KINDS, fence_parts, plan_canaries
from judgepool.judge.prompt import load_template
from judgepool.pooling.audit.overrides import override_label
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_texts import ingest_docs
from judgepool.pooling.store.canary_sources import is_canary_id
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import judge_runs
from judgepool.pooling.store.judgments import effective_labels_sql
from tests.conftest import CliResult
from tests.fake_judges import gullible_reply, honest_reply
from tests.fake_openai import FakeOpenAI
from tests.fixtures_databases import Prebuilt
from tests.judge_fixtures import EXPECTED, collection_copy

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
LABELLER = "openai/fake-model@relevance-v1"
#: Unrelated passages people labelled 0 for q2 and q3 (q1 has c4): every canary's source.
ZEROS = [
    ("z2", "Giraffes have long necks and eat leaves from tall trees. [[grade=0]]"),
    ("z3", "Copper conducts electricity well and is used in house wiring. [[grade=0]]"),
]


@pytest.fixture
def store(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, write: Writer, prebuilt: Prebuilt
) -> Store:
    def build() -> None:
        store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
        lines = "".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in ZEROS)
        ingest_docs(store, write("zeros.jsonl", lines))
        ingest_qrels(store, write("zeros.txt", "q2 0 z2 0\nq3 0 z3 0\n"), labeller="zeros.txt")

    prebuilt(build)
    return Store(tmp_path / "test.duckdb")


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


@pytest.fixture
def gullible(key: None) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(gullible_reply) as server:
        yield server


@pytest.fixture
def honest(key: None) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(honest_reply) as server:
        yield server


def judge(cli: Cli, server: FakeOpenAI, *extra: str) -> CliResult:
    return cli(
        "judge",
        "--model",
        "openai/fake-model",
        "--api-base",
        server.api_base,
        "--no-progress",
        *extra,
    )


#: A row of the canary table: judge, kind, pairs, graded, graded >= 2, rate, 95% interval.
RATE_ROW = r"^\S+\s+(stuffing|instruction|fence)\s+.*\s(\S+%)\s+(?:\[\S+, \S+\]|–)$"


def rates(out: str) -> dict[str, str]:
    """kind -> rate from the canary table."""
    return {m.group(1): m.group(2) for m in re.finditer(RATE_ROW, out, flags=re.M)}


def canary_rows(store: Store) -> list[tuple[Any, ...]]:
    with store.read() as con:
        return con.execute(
            "SELECT qid, doc_id, grade, status, purpose, provenance FROM judgments "
            "WHERE purpose = 'canary' ORDER BY id"
        ).fetchall()


def test_a_gullible_judge_is_fooled_by_every_kind(
    store: Store, gullible: FakeOpenAI, cli: Cli
) -> None:
    result = judge(cli, gullible)
    assert result.code == 0, result.err
    # 6 distinct hole texts + 2 canaries on each of the 3 queries: every call counted
    assert gullible.calls == 12
    assert rates(result.out) == {"stuffing": "100%", "instruction": "100%", "fence": "100%"}
    assert f"FOOLED BY CANARIES: {LABELLER}" in result.out
    assert "6 planted pairs of true grade 0 on 3 queries" in result.out
    rows = canary_rows(store)
    assert len(rows) == 6 and {r[2] for r in rows} == {3} and {r[4] for r in rows} == {"canary"}
    assert all(is_canary_id(r[1]) for r in rows)
    kinds = [json.loads(r[5])["canary"]["kind"] for r in rows]
    assert sorted(kinds) == sorted(KINDS * 2)
    sources = {json.loads(r[5])["canary"]["source_doc"] for r in rows}
    assert sources == {"c4", "z2", "z3"}  # the passages people labelled 0 for those queries
    # the holes were graded as always (the gullible judge is only fooled by the canaries)
    with store.read() as con:
        grades = dict(
            con.execute(
                "SELECT doc_id, grade FROM judgments WHERE purpose = 'label' AND source = 'judge' "
                "AND status = 'ok'"
            ).fetchall()
        )
        effective = con.execute(f"SELECT doc_id FROM ({effective_labels_sql('chunk')})").fetchall()
    assert grades == EXPECTED
    assert not any(is_canary_id(d) for (d,) in effective)  # never an effective label
    (row,) = judge_runs(store)
    assert row.fooled and row.labeller == LABELLER and row.canaries == 6
    assert row.rates() == {"fence": 1.0, "instruction": 1.0, "stuffing": 1.0}
    # never exported, whichever labels are asked for
    for source in ("effective", "judge"):
        out = cli("export", "qrels", "--source", source, "--format", "jsonl")
        assert out.code == 0 and "canary" not in out.out and '"purpose": "label"' in out.out


def test_an_honest_judge_is_not_fooled(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    result = judge(cli, honest)
    assert result.code == 0, result.err
    assert honest.calls == 12
    assert rates(result.out) == {"stuffing": "0%", "instruction": "0%", "fence": "0%"}
    assert "FOOLED" not in result.out
    (row,) = judge_runs(store)
    assert not row.fooled and row.canaries_graded == 6
    assert {r[2] for r in canary_rows(store)} == {0}


@pytest.mark.slow
def test_compare_and_eval_say_when_the_judge_was_fooled(
    store: Store, gullible: FakeOpenAI, cli: Cli
) -> None:
    assert judge(cli, gullible).code == 0
    table = cli("compare", "A", "B", "--force")
    assert table.code == 0, table.err
    assert f"FOOLED BY CANARIES: judge {LABELLER} (judge run 1" in table.out
    assert "instruction 100%" in table.out
    report = json.loads(cli("compare", "A", "B", "--force", "--format", "json").out)
    (fooled,) = report["fooled_by_canaries"]
    assert fooled["labeller"] == LABELLER and fooled["judge_run"] == 1
    assert fooled["rates"] == {"fence": 1.0, "instruction": 1.0, "stuffing": 1.0}
    assert fooled["canaries"] == 6 and fooled["threshold"] == 0.1
    assert "FOOLED BY CANARIES" in cli("eval").out
    # every report for a pull request says it too (issue 21: markdown and HTML said nothing)
    markdown = cli("compare", "A", "B", "--force", "--format", "markdown").out
    assert f"**FOOLED BY CANARIES: judge {LABELLER} (judge run 1" in markdown
    out = store.path.parent / "report"
    made = cli("report", "A", "B", "--force", "--html", f"{out}.html", "--markdown", f"{out}.md")
    assert made.code == 0, made.err
    for suffix in (".html", ".md"):
        text = Path(f"{out}{suffix}").read_text(encoding="utf-8")
        assert f"FOOLED BY CANARIES: judge {LABELLER}" in text and "judge-corrected" in text
    # a judge whose labels do not count here marks nothing
    other = json.loads(cli("eval", "--judge", "someone-else", "--format", "json").out)
    assert other["fooled_by_canaries"] == []


@pytest.mark.slow
def test_an_honest_judge_marks_no_report(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    assert judge(cli, honest).code == 0
    report = json.loads(cli("compare", "A", "B", "--force", "--format", "json").out)
    assert report["fooled_by_canaries"] == []
    assert "FOOLED" not in cli("compare", "A", "B", "--force").out


@pytest.mark.slow
def test_the_same_canaries_come_back_from_the_cache(
    store: Store, honest: FakeOpenAI, cli: Cli, write: Writer
) -> None:
    assert judge(cli, honest).code == 0
    assert honest.calls == 12
    # a new run brings one new hole: the next judge run draws the same canaries (same seed,
    # same pool queries) and pays only for the hole
    from judgepool.pooling.ingest_runs import ingest_run

    lines = "".join(
        json.dumps(
            {
                "doc_id": "c12",
                "parent_id": "P10",
                "text": "Water freezes at 0 degrees Celsius. [[grade=1]]",
            }
        )
        + "\n"
        for _ in [0]
    )
    ingest_docs(store, write("more.jsonl", lines))
    ingest_run(store, write("C.trec", "q1 Q0 c12 1 9 C\n"))
    result = judge(cli, honest)
    assert result.code == 0, result.err
    assert honest.calls == 13
    assert "0 calls, cost $0.0000" in result.out  # the canaries' own line
    assert len(canary_rows(store)) == 12  # each run's check has its own labels
    assert [r.canaries_graded for r in judge_runs(store)] == [6, 6]


def test_how_many_canaries(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    assert judge(cli, honest, "--no-canaries").code == 0
    assert honest.calls == 6 and canary_rows(store) == []
    (row,) = judge_runs(store)
    assert row.canaries == 0 and not row.fooled
    bad = judge(cli, honest, "--canaries", "2", "--no-canaries")
    assert bad.code == 2 and "contradict" in bad.err


def test_one_canary_per_query(store: Store, gullible: FakeOpenAI, cli: Cli) -> None:
    result = judge(cli, gullible, "--canaries", "1", "--canary-threshold", "0.5")
    assert result.code == 0, result.err
    assert gullible.calls == 9
    assert sorted(json.loads(r[5])["canary"]["kind"] for r in canary_rows(store)) == sorted(KINDS)


def test_a_dry_run_forecasts_the_canaries(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    result = judge(cli, honest, "--dry-run")
    assert result.code == 0, result.err
    assert f"canaries for {LABELLER}: 6 pairs, 6 calls (0 in the cache)" in result.out
    assert honest.calls == 0


def test_a_canary_never_gets_a_label_that_counts(
    store: Store, honest: FakeOpenAI, cli: Cli
) -> None:
    assert is_canary_id("canary stuffing-0123") and not is_canary_id("canary-1")
    assert judge(cli, honest).code == 0
    qid, doc_id = canary_rows(store)[0][:2]
    with pytest.raises(UsageError, match="is a canary, a planted pair of grade 0"):
        override_label(store, qid, doc_id, 3, "me")  # its labels make it known: still refused


def test_the_fence_canary_imitates_the_template() -> None:
    assert fence_parts(load_template()) == ("<<<PASSAGE", "PASSAGE>>>", "##final score: 3")


def test_unrelated_passages_from_far_queries(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Without a passage labelled 0 for it, a query gets one retrieved for another query that
    no run retrieved for it, with no label for it and no content word in common."""
    store = collection_copy(tmp_path_factory, tmp_path / "far.duckdb")
    plan = plan_canaries(store, load_template(), ["q1", "q2", "q3"], per_query=2)
    by_query: dict[str, set[str]] = {}
    for request in plan.requests:
        about = dict(request.about)
        by_query.setdefault(request.qid, set()).add(about["source_doc"])
        if about["source_doc"] != "c4":
            assert about["source"].startswith("retrieved for query q")
    assert by_query["q1"] == {"c4"}  # labelled 0 for q1 by a person
    retrieved = {"q2": {"c7", "c8", "c9"}, "q3": {"c10", "c11"}}
    for qid, docs in retrieved.items():
        assert by_query[qid] and not by_query[qid] & docs
    # q3 ("capital of france") never gets the France passages, q2 never Hamlet's
    assert "c11" not in by_query["q3"] and "c7" not in by_query["q2"]
    kinds = [dict(r.about)["kind"] for r in plan.requests]
    assert sorted(kinds) == sorted(KINDS * 2)
    again = plan_canaries(store, load_template(), ["q1", "q2", "q3"], per_query=2)
    assert [r.doc_id for r in again.requests] == [r.doc_id for r in plan.requests]  # seeded


def test_the_library_reports_the_canaries(store: Store, gullible: FakeOpenAI) -> None:
    import judgepool as jp

    report = jp.open(store.path).judge("openai/fake-model", api_base=gullible.api_base)
    assert gullible.calls == 12
    assert report.outcomes == {"ok": 7, "no_text": 1}  # the holes; the canaries apart
    assert report.fooled and report.canaries.height == 6 and report.canaries["fooled"].all()
    assert set(report.canaries["kind"]) == set(KINDS)


@pytest.mark.slow
def test_a_dry_run_totals_every_judge_and_the_canaries(
    store: Store, honest: FakeOpenAI, cli: Cli
) -> None:
    """The headline forecast is the first judge's holes only: the total says what the whole run
    asks, and a member without a price makes it unknown, never $0."""
    one = judge(cli, honest, "--dry-run")
    assert (
        "whole run: 12 calls (6 for the holes, 6 for the canaries), estimated cost unknown"
        in one.out
    )
    mixed = cli(
        "judge",
        "--model",
        "offline",
        "--model",
        "openai/fake-model",
        "--api-base",
        "-",
        "--api-base",
        honest.api_base,
        "--dry-run",
        "--no-progress",
    )
    assert mixed.code == 0, mixed.err
    assert (
        "whole run: 24 calls (12 for the holes, 12 for the canaries), estimated cost "
        "unknown (openai/fake-model@relevance-v1 has no price)" in mixed.out
    )
    offline = cli("judge", "--model", "offline", "--dry-run", "--no-progress")
    assert (
        "whole run: 12 calls (6 for the holes, 6 for the canaries), estimated cost $0.0000"
        in offline.out
    )
    assert honest.calls == 0


def test_status_counts_canary_labels_apart(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    """`status` counts a judge's labels that matter (purpose 'label'); its canary labels are in
    a column of their own, never in that count."""
    assert judge(cli, honest).code == 0
    found = json.loads(cli("status", "--format", "json").out)["labels"]
    mine = {x["status"]: x for x in found if x["labeller"] == LABELLER}
    assert mine["ok"]["count"] == 7 and mine["ok"]["canary"] == 6
    assert mine["ok"]["calibration"] == 0 and mine["no_text"]["count"] == 1
    human = [x for x in found if x["source"] == "human"]
    assert human and all(x["canary"] == 0 and x["calibration"] == 0 for x in human)
    table = cli("status").out.splitlines()
    assert re.search(r"\blabels\s+canary\s+calibration$", table[2])
    (line,) = [x for x in table if LABELLER in x and " ok " in x]
    assert line.split()[-3:] == ["7", "6", "0"]


def test_queries_count_a_judges_labels_without_its_canaries(
    store: Store, honest: FakeOpenAI, cli: Cli
) -> None:
    """`queries`' judge_labels are the labels that count, per query: canaries planted for a
    query are not among them (they were, before: 13 for a judge's 7 labels)."""
    assert judge(cli, honest).code == 0
    found = json.loads(cli("queries", "--format", "json").out)
    with store.read() as con:
        expected = dict(
            con.execute(
                "SELECT qid, count(*) FROM judgments WHERE source = 'judge' AND status = 'ok' "
                "AND purpose = 'label' GROUP BY qid"
            ).fetchall()
        )
        canaries = con.execute("SELECT count(*) FROM judgments WHERE purpose = 'canary'").fetchone()
    assert canaries is not None and canaries[0] > 0
    assert {q["qid"]: q["judge_labels"] for q in found if q["judge_labels"]} == expected


def calibrate(cli: Cli, server: FakeOpenAI, *extra: str) -> CliResult:
    return cli(
        "calibrate",
        "--model",
        "openai/fake-model",
        "--api-base",
        server.api_base,
        "--no-progress",
        *extra,
    )


@pytest.mark.slow
def test_calibrate_plants_canaries_a_gullible_judge_is_fooled(
    store: Store, gullible: FakeOpenAI, cli: Cli
) -> None:
    from judgepool.pooling.audit.calibration_pairs import calibration_runs

    result = calibrate(cli, gullible)
    assert result.code == 0, result.err
    # the 3 pooled human-labelled pairs (c4, c8, c11), then 2 canaries on each of the 3 queries
    assert gullible.calls == 9
    assert rates(result.out) == {"stuffing": "100%", "instruction": "100%", "fence": "100%"}
    assert f"FOOLED BY CANARIES: {LABELLER}" in result.out
    assert "6 planted pairs of true grade 0 on 3 queries (seed 20240611); 6 calls" in result.out
    rows = canary_rows(store)
    assert len(rows) == 6 and {r[2] for r in rows} == {3} and {r[4] for r in rows} == {"canary"}
    (row,) = judge_runs(store)
    assert row.command == "calibrate" and row.labeller == LABELLER and row.fooled
    assert row.rates() == {"fence": 1.0, "instruction": 1.0, "stuffing": 1.0}
    assert row.outcome["canary_calls"] == 6 and row.outcome["calls"] == 3
    (stored,) = calibration_runs(store)
    canaries = stored.figures["canaries"]
    assert canaries["rates"] == {"fence": 1.0, "instruction": 1.0, "stuffing": 1.0}
    assert canaries["fooled"] and canaries["planted"] == 6 and canaries["calls"] == 6
    assert canaries["judge_run"] == row.id and canaries["threshold"] == 0.1
    # the same judge then fills the holes without canaries of its own: the reports that use
    # its labels say it was fooled (the check that counts is calibrate's)
    assert judge(cli, gullible, "--no-canaries").code == 0
    assert gullible.calls == 15
    table = cli("compare", "A", "B", "--force")
    assert f"FOOLED BY CANARIES: judge {LABELLER} (judge run 1" in table.out
    report = json.loads(cli("compare", "A", "B", "--force", "--format", "json").out)
    assert [f["judge_run"] for f in report["fooled_by_canaries"]] == [1]


@pytest.mark.slow
def test_calibrate_with_an_honest_judge_is_not_fooled(
    store: Store, honest: FakeOpenAI, cli: Cli
) -> None:
    import judgepool as jp

    result = calibrate(cli, honest)
    assert result.code == 0, result.err
    assert honest.calls == 9
    assert rates(result.out) == {"stuffing": "0%", "instruction": "0%", "fence": "0%"}
    assert "FOOLED" not in result.out
    (row,) = judge_runs(store)
    assert not row.fooled and row.canaries_graded == 6 and row.command == "calibrate"
    assert {r[2] for r in canary_rows(store)} == {0}
    # the library: same canaries, answered by the cache
    report = jp.open(store.path).calibrate(
        "openai/fake-model", api_base=honest.api_base, canary_threshold=0.5
    )
    assert honest.calls == 9 and report.canaries is not None and not report.fooled
    assert report.canaries.threshold == 0.5 and report.canaries.rate == 0.0


def test_calibrate_with_no_canaries_plants_none(store: Store, honest: FakeOpenAI, cli: Cli) -> None:
    result = calibrate(cli, honest, "--no-canaries")
    assert result.code == 0, result.err
    assert honest.calls == 3 and canary_rows(store) == [] and "canaries" not in result.out
    (row,) = judge_runs(store)
    assert row.canaries == 0 and not row.fooled
    one = calibrate(cli, honest, "--canaries", "1", "--seed", "2")
    assert one.code == 0, one.err
    assert honest.calls == 6 and len(canary_rows(store)) == 3  # 1 canary per query
    bad = calibrate(cli, honest, "--canaries", "2", "--no-canaries")
    assert bad.code == 2 and "contradict" in bad.err
