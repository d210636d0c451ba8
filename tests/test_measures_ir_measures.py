"""Any ir-measures measure: computed by ir-measures on the effective labels, under judgepool's
query-set policy, equal to pytrec_eval (trec_eval's code) to 1e-9; intervals, paired tests and
the gate as for the native four.

The reference is pytrec_eval given the same qrels and run files directly: per query, on every
query where the measure has a value for us (a query with a doc at its relevance level); queries
the run misses score 0 for us (trec_eval -c).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import UsageError
from judgepool.metrics.compare import compare
from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.spec import CompareSpec, EvalSpec
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
# ours -> (pytrec_eval measure, its key in the result)
PYTREC = {
    "P@5": ("P_5", "P_5"),
    "P(rel=2)@10": ("P_10", "P_10"),
    "AP@100": ("map_cut_100", "map_cut_100"),
    "AP": ("map", "map"),
    "nDCG@20": ("ndcg_cut_20", "ndcg_cut_20"),
    "R@100": ("recall_100", "recall_100"),
    "RR": ("recip_rank", "recip_rank"),
    "Rprec": ("Rprec", "Rprec"),
}


def _random_collection(tmp_path: Path, seed: int) -> tuple[Path, dict[str, Path]]:
    """Qrels with grades -1..3 on 12 queries and two runs with ties in score, missing queries."""
    rng = random.Random(seed)
    qrels, runs = [], {"a": [], "b": []}
    for q in range(12):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(40)]
        for doc in rng.sample(docs, 15):
            qrels.append(f"{qid} 0 {doc} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
        for name, rows in runs.items():
            if name == "b" and q == 3:
                continue  # b misses q3: it scores 0 there
            for rank, doc in enumerate(rng.sample(docs, 30), start=1):
                score = round(rng.uniform(0, 5), 1)  # one decimal: many ties
                rows.append(f"{qid} Q0 {doc} {rank} {score} {name}")
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    paths = {}
    for name, rows in runs.items():
        paths[name] = tmp_path / f"{name}.trec"
        paths[name].write_text("\n".join(rows) + "\n")
    return qrels_path, paths


def _pytrec(qrels: Path, run: Path, names: set[str], rel: int) -> dict[str, dict[str, float]]:
    import pytrec_eval

    with qrels.open() as fh:
        judged = pytrec_eval.parse_qrel(fh)
    with run.open() as fh:
        ranking = pytrec_eval.parse_run(fh)
    evaluator = pytrec_eval.RelevanceEvaluator(judged, names, relevance_level=rel)
    return evaluator.evaluate(ranking)  # type: ignore[no-any-return]


def _trec_names(pytrec_key: str) -> str:
    """pytrec_eval's measure name for its result key (P_5 -> P.5)."""
    for prefix in ("map_cut_", "ndcg_cut_", "recall_", "P_"):
        if pytrec_key.startswith(prefix):
            return prefix[:-1] + "." + pytrec_key[len(prefix) :]
    return pytrec_key


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ir_measures_measures_equal_pytrec_eval(tmp_path: Path, seed: int) -> None:
    qrels, runs = _random_collection(tmp_path, seed)
    store = Store(tmp_path / "eval.duckdb")
    ingest_qrels(store, qrels)
    for name, path in runs.items():
        ingest_run(store, path, name=name)
    ev = evaluate(store, spec=EvalSpec(measures=list(PYTREC), resamples=200))
    native = {"nDCG@20", "R@100"}  # judgepool's own path, at a deeper cutoff than k
    assert {m for m in PYTREC if ev.engines[m] == "judgepool"} == native
    assert all(ev.engines[m].startswith("ir-measures (") for m in set(PYTREC) - native)
    checked = 0
    for run, path in runs.items():
        ours = ev.per_query(run)
        for measure, (name, key) in PYTREC.items():
            rel = 2 if "rel=2" in measure else 1
            theirs = _pytrec(qrels, path, {_trec_names(name)}, rel)
            for qid in ev.qids:
                mine = ours[qid][measure]
                relevant = any(
                    int(g) >= rel
                    for line in qrels.read_text().splitlines()
                    for q, _, _, g in [line.split()]
                    if q == qid
                )
                if not relevant:
                    assert mine is None, (measure, qid)
                    continue
                expected = theirs[qid][key] if qid in theirs else 0.0
                assert mine == pytest.approx(expected, abs=1e-9), (run, measure, qid)
                checked += 1
    assert checked > 150


def test_ir_measures_measures_get_intervals_paired_tests_and_the_gate(tmp_path: Path) -> None:
    qrels, runs = _random_collection(tmp_path, 4)
    store = Store(tmp_path / "eval.duckdb")
    ingest_qrels(store, qrels)
    for name, path in runs.items():
        ingest_run(store, path, name=name)
    result = compare(
        store, "a", ["b"], CompareSpec(measures=["RR@10", "P@5"], force=True, resamples=500)
    )
    assert [d.measure for d in result.deltas] == ["RR@10", "P@5"]
    for delta in result.deltas:
        assert delta.ci95 is not None and delta.p is not None and delta.p_holm is not None
        assert delta.ci95[0] <= delta.delta <= delta.ci95[1]  # type: ignore[operator]
    assert result.refused  # the random runs are far under judged@10 0.9
    bounds = result.evaluation.summaries["a"].bounds
    assert bounds is not None and bounds["RR@10"][1] >= bounds["RR@10"][0]  # type: ignore[operator]


def test_measure_option_on_the_cli(cli: Cli, write: Callable[[str, str], Path]) -> None:
    run = write("a.trec", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d3 1 1 a\n")
    qrels = write("qrels.txt", "q1 0 d2 1\nq1 0 d1 0\nq2 0 d3 2\n")
    assert cli("ingest", "run", run).code == 0
    assert cli("ingest", "qrels", qrels).code == 0
    done = cli("eval", "--measure", "RR@10", "--measure", "P@1", "--format", "json")
    assert done.code == 0, done.err
    import json

    report = json.loads(done.out)
    assert report["runs"]["a"]["per_query"] == {
        "q1": {"RR@10": 0.5, "P@1": 0.0},
        "q2": {"RR@10": 1.0, "P@1": 1.0},
    }
    assert report["engines"]["RR@10"].startswith("ir-measures")
    table = cli("eval", "--measure", "RR@10")
    assert "RR@10 computed by ir-measures" in table.out
    bad = cli("eval", "--measure", "MRR@@10")
    assert bad.code == 2 and "error: cannot use measure" in bad.err and "nDCG" in bad.err


def test_an_unknown_measure_is_a_usage_error_with_the_list(tmp_path: Path) -> None:
    store = Store(tmp_path / "eval.duckdb")
    with pytest.raises(UsageError, match="measure not found: Bogus"):
        evaluate(store, spec=EvalSpec(measures=["Bogus@10"]))
