"""`judgepool eval` and `judgepool compare` end to end: tables, CSV, JSON, levels, judges, bounds.

A small collection worked out by hand. Evaluation set = q1..q4 (every query with a label):
- q1: a=3, b=0, c=2, z=1  (z is never retrieved)   - q2: e=1, f=0, g=-1
- q3: h=0 (no relevant doc: left out of nDCG, R, nR) - q4: w=2 (no run retrieves it: scores 0)
Run base ranks q1: a b c d, q2: e f g, q3: h.   Run cand ranks q1: c a x y, q2: f e (no q3).
"""

from __future__ import annotations

import csv
import io
import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.pool import PoolSpec, list_holes
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

BASE = "".join(
    f"{q} Q0 {d} {i} {s} base\n"
    for i, (q, d, s) in enumerate(
        [
            ("q1", "a", 4),
            ("q1", "b", 3),
            ("q1", "c", 2),
            ("q1", "d", 1),
            ("q2", "e", 3),
            ("q2", "f", 2),
            ("q2", "g", 1),
            ("q3", "h", 1),
        ]
    )
)
CAND = "".join(
    f"{q} Q0 {d} {i} {s} cand\n"
    for i, (q, d, s) in enumerate(
        [
            ("q1", "c", 4),
            ("q1", "a", 3),
            ("q1", "x", 2),
            ("q1", "y", 1),
            ("q2", "f", 2),
            ("q2", "e", 1),
        ]
    )
)
QRELS = (
    "q1 0 a 3\nq1 0 b 0\nq1 0 c 2\nq1 0 z 1\nq2 0 e 1\nq2 0 f 0\nq2 0 g -1\nq3 0 h 0\nq4 0 w 2\n"
)
LOG3 = math.log2(3)


@pytest.fixture
def store(write: Writer, prebuilt: Prebuilt) -> Store:
    def build() -> None:
        store = Store()
        ingest_qrels(store, write("qrels.txt", QRELS))
        ingest_run(store, write("base.trec", BASE))
        ingest_run(store, write("cand.trec", CAND))

    prebuilt(build)
    return Store()


def test_values_by_hand(store: Store) -> None:
    ev = evaluate(store, spec=EvalSpec(resamples=100))
    assert ev.qids == ("q1", "q2", "q3", "q4")
    idcg1 = 3 + 2 / LOG3 + 1 / 2
    base, cand = ev.per_query("base"), ev.per_query("cand")
    assert base["q1"]["nDCG@10"] == pytest.approx((3 + 2 / 2) / idcg1)
    assert cand["q1"]["nDCG@10"] == pytest.approx((2 + 3 / LOG3) / idcg1)
    assert cand["q2"]["nDCG@10"] == pytest.approx((1 / LOG3) / 1)
    assert base["q1"]["R(rel=3)@10"] == 1.0 and base["q2"]["R(rel=3)@10"] is None
    assert base["q1"]["nR@10"] == pytest.approx(2 / 2)
    assert base["q4"] == {"nDCG@10": 0.0, "R(rel=3)@10": None, "nR@10": 0.0, "Judged@10": 0.0}
    assert base["q3"]["nDCG@10"] is None and base["q3"]["Judged@10"] == 1.0
    # Judged: base q1 a b c labelled, d not -> 3/4; q2 e f g (g = -1 counts) -> 1; q3 1; q4 0.
    assert base["q1"]["Judged@10"] == 0.75 and base["q2"]["Judged@10"] == 1.0
    assert ev.summaries["base"].judged == pytest.approx((0.75 + 1 + 1 + 0) / 4)
    assert ev.summaries["cand"].judged == pytest.approx((0.5 + 1 + 0 + 0) / 4)
    assert (ev.summaries["cand"].holes, ev.summaries["cand"].missing) == (2, 2)
    assert (ev.n("nDCG@10"), ev.n("R(rel=3)@10"), ev.n("nR@10"), ev.n("Judged@10")) == (3, 1, 2, 4)
    assert ev.left_out("nR@10") == ["q2", "q3"]


def test_eval_table_states_level_queries_and_bounds(store: Store, cli: Cli) -> None:
    result = cli("eval", "--resamples", "200")
    assert result.code == 0, result.err
    out = result.out
    assert "chunk level, k=10" in out and "evaluation set: 4 queries" in out
    assert "nDCG@10 3 (1 left out: no doc of grade >= 1)" in out
    assert "R(rel=3)@10 1 (3 left out: no doc of grade >= 3)" in out
    assert "a run returned nothing for (scored 0): base 1, cand 2" in out
    assert "counted grade 3" in out  # the bounds table, for the runs with holes


def test_eval_json_is_the_documented_object(store: Store, cli: Cli) -> None:
    result = cli("eval", "--format", "json", "--resamples", "200", "--run", "cand")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert set(doc) >= {"runs", "comparisons", "refused", "unreliable"}
    assert (doc["level"], doc["k"], doc["queries"], doc["comparisons"]) == ("chunk", 10, 4, [])
    assert doc["refused"] == [] and doc["unreliable"] is False
    run = doc["runs"]["cand"]
    names = ["nDCG@10", "R(rel=3)@10", "nR@10", "Judged@10"]
    assert list(run["mean"]) == names and list(run["ci95"]) == names
    assert run["queries"] == 4 and run["n"] == dict(zip(names, [3, 1, 2, 4], strict=True))
    lo, hi = run["ci95"]["nDCG@10"]
    assert lo <= run["mean"]["nDCG@10"] <= hi
    assert run["per_query"]["q3"]["nDCG@10"] is None  # left out, never a silent 0
    assert run["per_query"]["q4"]["nDCG@10"] == 0.0  # missed by the run: scores 0
    assert doc["left_out"]["nDCG@10"] == ["q3"]
    assert run["bounds"]["nDCG@10"][0] == run["mean"]["nDCG@10"]


def test_eval_k_and_thresholds_rename_the_measures(store: Store, cli: Cli) -> None:
    result = cli("eval", "--format", "json", "--k", "3", "--rel", "1", "--key-rel", "2")
    doc = json.loads(result.out)
    assert list(doc["runs"]["base"]["mean"]) == ["nDCG@3", "R(rel=2)@3", "nR(rel=1)@3", "Judged@3"]


def test_eval_csv_summary_and_per_query(store: Store, cli: Cli) -> None:
    rows = list(csv.DictReader(io.StringIO(cli("eval", "--format", "csv").out)))
    assert len(rows) == 8 and rows[0]["run"] == "base" and rows[0]["measure"] == "nDCG@10"
    assert rows[1]["mean"] == "1.0" and rows[1]["n"] == "1"  # base R(rel=3)@10 on q1 only
    per_query = list(csv.DictReader(io.StringIO(cli("eval", "--format", "csv", "--per-query").out)))
    assert len(per_query) == 2 * 4 * 4
    left_out = [r for r in per_query if r["qid"] == "q3" and r["measure"] == "nDCG@10"]
    assert left_out[0]["value"] == ""
    table = cli("eval", "--per-query", "--resamples", "50").out
    assert "q4" in table


def test_results_repeat_with_the_seed(store: Store) -> None:
    first = evaluate(store, spec=EvalSpec(resamples=500, seed=5)).boot["nDCG@10"]
    assert np.array_equal(
        evaluate(store, spec=EvalSpec(resamples=500, seed=5)).boot["nDCG@10"], first
    )
    assert not np.array_equal(
        evaluate(store, spec=EvalSpec(resamples=500, seed=6)).boot["nDCG@10"], first
    )


def _label_holes(store: Store, run: str, grade: int, labeller: str) -> list[tuple[str, str]]:
    pairs = [(h.qid, h.doc_id) for h in list_holes(store, PoolSpec(depth=10, runs=[run]))]
    write_judgments(store, [Judgment(q, d, grade, "judge", labeller) for q, d in pairs])
    return pairs


@pytest.mark.parametrize("grade", [0, 3])
def test_bounds_are_the_means_once_the_holes_are_labelled(store: Store, grade: int) -> None:
    """Label every hole of cand 0 (the low bound) or 3 (the high bound), then evaluate again."""
    before = evaluate(store, ["cand"], EvalSpec(resamples=50)).summaries["cand"].bounds or {}
    _label_holes(store, "cand", grade, "bound-test")
    after = evaluate(store, ["cand"], EvalSpec(resamples=50)).summaries["cand"]
    assert after.holes == 0 and after.bounds is None
    for name, (low, high) in before.items():
        assert after.mean[name] == pytest.approx(low if grade == 0 else high, abs=1e-12), name


def test_judge_option_counts_only_that_judges_labels(store: Store, cli: Cli) -> None:
    before = evaluate(store, ["cand"], EvalSpec(resamples=50)).per_query("cand")["q1"]["nDCG@10"]
    pairs = _label_holes(store, "cand", 2, "judge-a")
    # The same pairs graded 0 by judge-b, written later: they win when any judge counts.
    write_judgments(store, [Judgment(q, d, 0, "judge", "judge-b") for q, d in pairs])
    as_a = evaluate(store, ["cand"], EvalSpec(labeller="judge-a", resamples=50))
    as_any = evaluate(store, ["cand"], EvalSpec(resamples=50))
    assert as_a.summaries["cand"].holes == as_any.summaries["cand"].holes == 0
    # judge-a: x = y = 2 in cand's q1 (c a x y); any judge: judge-b's later 0s, as if unlabelled.
    ideal = 3 + 2 / LOG3 + 2 / 2 + 2 / math.log2(5) + 1 / math.log2(6)
    expected_a = (2 + 3 / LOG3 + 2 / 2 + 2 / math.log2(5)) / ideal
    assert as_a.per_query("cand")["q1"]["nDCG@10"] == pytest.approx(expected_a)
    assert as_any.per_query("cand")["q1"]["nDCG@10"] == pytest.approx(before)
    doc = json.loads(cli("eval", "--judge", "judge-a", "--format", "json").out)
    assert doc["judge"] == "judge-a"
    unknown = evaluate(store, ["cand"], EvalSpec(labeller="nobody", resamples=50))
    assert unknown.summaries["cand"].holes == 2


def test_doc_level_collapses_chunks_to_documents(write: Writer, cli: Cli) -> None:
    store = Store()
    docs = [("c1", "D1"), ("c2", "D1"), ("c3", "D2"), ("c4", "D3")]
    write(
        "chunks.jsonl",
        "".join(json.dumps({"doc_id": c, "text": c, "parent_id": p}) + "\n" for c, p in docs),
    )
    assert cli("ingest", "docs", "chunks.jsonl").code == 0
    ingest_run(
        store, write("r.trec", "q Q0 c1 1 4 r\nq Q0 c3 2 3 r\nq Q0 c2 3 2 r\nq Q0 c4 4 1 r\n")
    )
    ingest_qrels(store, write("doc-qrels.txt", "q 0 D1 0\nq 0 D2 0\nq 0 D3 3\n"), level="doc")
    ev = evaluate(store, spec=EvalSpec(level="doc", k=3, resamples=50))
    # Documents ranked D1 (c1), D2 (c3), D3 (c4): D3 at rank 3 is the only relevant one.
    assert ev.per_query("r")["q"]["nDCG@3"] == pytest.approx((3 / 2) / 3)
    assert ev.per_query("r")["q"]["Judged@3"] == 1.0
    result = cli("eval", "--level", "doc", "--k", "3")
    assert result.code == 0 and "doc level, k=3" in result.out
    missing = cli("eval", "--level", "chunk")
    assert missing.code == 2 and "no query has an effective label at the chunk level" in missing.err


def test_compare_refuses_under_the_gate(store: Store, cli: Cli) -> None:
    result = cli("compare", "base", "cand", "--resamples", "200")
    assert result.code == 3
    assert result.out == ""
    err = result.err
    assert "judged@10 gate of 0.9" in err
    assert "cand: judged@10 0.375, 2 holes, nothing returned for 2 of 4 queries)" in err
    assert "2 runs under" in err
    assert "base: judged@10 0.688, 1 hole, nothing returned for 1 of 4 queries;" in err
    command = (
        f"judgepool --db {shlex.quote(str(store.path))} judge --depth 10 --run base --run cand"
    )
    assert f"fill the holes with: {command} --model MODEL" in err


def test_compare_refusal_prints_json_then_exits_3(store: Store, cli: Cli) -> None:
    result = cli("compare", "base", "cand", "--format", "json", "--gate", "0.5")
    assert result.code == 3
    doc = json.loads(result.out)
    assert doc["comparisons"] == [] and doc["unreliable"] is False
    assert doc["refused"] == [{"run": "cand", "judged": 0.375, "holes": 2, "missing": 2}]
    assert shlex.split(doc["judge_command"])[3:] == [
        "judge",
        "--depth",
        "10",
        "--run",
        "cand",
        "--model",
        "MODEL",
    ]


def test_compare_force_marks_every_affected_line(store: Store, cli: Cli) -> None:
    table = cli("compare", "base", "cand", "--gate", "0.5", "--force", "--resamples", "300")
    assert table.code == 0, table.err
    lines = [line for line in table.out.splitlines() if line.startswith("cand ")]
    assert len(lines) == 5  # its row in the runs table, one per compared measure, its bounds
    assert all(line.rstrip().endswith("UNRELIABLE") for line in lines)
    base_row = next(line for line in table.out.splitlines() if line.startswith("base "))
    assert "UNRELIABLE" not in base_row
    doc = json.loads(
        cli("compare", "base", "cand", "--gate", "0.5", "--force", "--format", "json").out
    )
    assert doc["unreliable"] is True and doc["refused"][0]["run"] == "cand"
    assert len(doc["comparisons"]) == 3 and all(c["unreliable"] for c in doc["comparisons"])
    first = doc["comparisons"][0]
    assert set(first) >= {
        "baseline",
        "candidate",
        "measure",
        "delta",
        "ci95",
        "p",
        "p_holm",
        "significant",
    }
    rows = list(
        csv.DictReader(
            io.StringIO(
                cli("compare", "base", "cand", "--force", "--gate", "0.5", "--format", "csv").out
            )
        )
    )
    assert [r["unreliable"] for r in rows] == ["True"] * 3


def test_compare_passes_the_gate_after_labelling(store: Store, cli: Cli) -> None:
    _label_holes(store, "cand", 1, "fill")
    _label_holes(store, "base", 1, "fill")
    # cand still misses q3 and q4 (judged 0.5): under 0.9, over 0.4.
    result = cli("compare", "base", "cand", "--gate", "0.4", "--format", "json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["refused"] == [] and doc["unreliable"] is False
    ndcg = next(c for c in doc["comparisons"] if c["measure"] == "nDCG@10")
    base_mean = doc["runs"]["base"]["mean"]["nDCG@10"]
    assert ndcg["delta"] == pytest.approx(doc["runs"]["cand"]["mean"]["nDCG@10"] - base_mean)
    assert ndcg["p_holm"] >= ndcg["p"] and ndcg["significant"] is (ndcg["p_holm"] < 0.05)


def test_compare_usage_errors(store: Store, cli: Cli) -> None:
    assert cli("compare", "base", "base").code == 2
    unknown = cli("compare", "base", "nope")
    assert unknown.code == 2 and "unknown run(s): nope" in unknown.err


def test_the_refusal_command_is_one_the_cli_accepts(store: Store, cli: Cli) -> None:
    """Parse the printed command with the real `judgepool` CLI (MODEL filled in, nothing run)."""
    from judgepool.ui.cli import cli as judgepool

    doc = json.loads(cli("compare", "base", "cand", "--format", "json", "--level", "chunk").out)
    argv = shlex.split(doc["judge_command"].replace("MODEL", "openai/gpt-4o-mini"))
    assert argv[0] == "judgepool"
    with judgepool.make_context("judgepool", argv[1:3]) as ctx:  # --db PATH
        assert ctx.params["db"] == str(store.path)
        name, *rest = argv[3:]
        command = judgepool.get_command(ctx, name)
        assert command is not None
        params = command.make_context(name, rest, parent=ctx).params
    assert (params["depth"], params["runs"], params["level"]) == (10, ("base", "cand"), "chunk")
    assert params["models"] == ("openai/gpt-4o-mini",) and params["labeller"] is None
