"""Per-query values equal trec_eval's on its own test files and on the TREC DL 2019 runs.

The files go through our real ingest into a tmp database; the references are trec_eval's
expected outputs (4 decimals, so compared to 5e-5) and pytrec_eval (trec_eval's code, to 1e-9).
trec_eval without -c scores only queries in both run and qrels; we score every evaluation-set
query (a missing one is 0), which is trec_eval -c: out.test.aqc checks exactly that. Queries
with no doc at a measure's threshold have no value for us (left out of the mean); trec_eval
prints 0 for them, so those are compared as "ours is None, theirs is 0".
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from judgepool.metrics.evaluate import EvaluationFigures, evaluate
from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.pool import PoolSpec, pool_summary
from judgepool.pooling.store.connection import Store

pytestmark = pytest.mark.shared

TREC = {"nDCG": "ndcg_cut_10", "R": "recall_10", "nR": "relative_P_10"}


def _expected(path: Path) -> dict[tuple[str, str], float]:
    """(measure, qid) -> value from a trec_eval -q output file."""
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        if name in TREC.values():
            out[(name, qid)] = float(value)
    return out


def _store(tmp_path: Path, qrels: Path, runs: dict[str, Path]) -> Store:
    store = Store(tmp_path / "eval.duckdb")
    ingest_qrels(store, qrels)
    for name, path in runs.items():
        ingest_run(store, path, name=name, fmt="trec")
    return store


def _by_trec_name(ev: EvaluationFigures) -> dict[str, str]:
    return {TREC[m.kind]: str(m) for m in ev.measures if m.kind in TREC}


def _pytrec(qrels: Path, run: Path, k: int, rel: int) -> dict[str, dict[str, float]]:
    import pytrec_eval

    with qrels.open() as fh:
        judged = pytrec_eval.parse_qrel(fh)
    ranking: dict[str, dict[str, float]] = {}
    with run.open() as fh:
        for line in fh:
            qid, _, doc, _, score = line.split()[:5]
            ranking.setdefault(qid, {})[doc] = float(score)
    names = {f"ndcg_cut.{k}", f"recall.{k}", f"relative_P.{k}"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, names, relevance_level=rel)
    return evaluator.evaluate(ranking)  # type: ignore[no-any-return]


def _check_against(ev: EvaluationFigures, run: str, expected: dict[tuple[str, str], float]) -> int:
    """Per query and the mean ("all"; every query there has a relevant doc) to 4 decimals."""
    names = _by_trec_name(ev)
    ours = ev.per_query(run)
    checked = 0
    for (trec_name, qid), value in expected.items():
        if qid == "all":
            mine = ev.summaries[run].mean[names[trec_name]]
        else:
            mine = ours[qid][names[trec_name]]
        assert (0.0 if mine is None else mine) == pytest.approx(value, abs=5e-5), (trec_name, qid)
        checked += 1
    return checked


@pytest.mark.parametrize(
    ("qrels", "results", "expected", "rel"),
    [
        ("qrels.test", "results.test", "out.test.aq", 1),
        ("qrels.rel_level", "results.test", "out.test.aql", 2),
    ],
)
def test_trec_eval_expected_outputs(
    shared_data: Path, tmp_path: Path, qrels: str, results: str, expected: str, rel: int
) -> None:
    """out.test.aq (binary) and out.test.aql (grades -1..4, -l2) per query, and pytrec_eval."""
    te = shared_data / "trec_eval_test"
    store = _store(tmp_path, te / qrels, {"run": te / results})
    ev = evaluate(store, spec=EvalSpec(k=10, rel=rel, key_rel=rel, resamples=10))
    assert _check_against(ev, "run", _expected(te / expected)) == 12
    reference = _pytrec(te / qrels, te / results, 10, rel)
    names = _by_trec_name(ev)
    for qid, values in ev.per_query("run").items():
        for trec_name, name in names.items():
            mine = values[name]
            assert (0.0 if mine is None else mine) == pytest.approx(
                reference[qid][trec_name], abs=1e-9
            )


def test_trec_eval_missing_query_scores_zero(shared_data: Path, tmp_path: Path) -> None:
    """out.test.aqc = trec_eval -c on results.trunc, which has no line for query 302.

    results.trunc carries junk after the sixth column, which trec_eval ignores and our ingest
    refuses; the copy keeps the six columns of every line, nothing else changes.
    """
    te = shared_data / "trec_eval_test"
    trunc = tmp_path / "results.trunc.trec"
    lines = (te / "results.trunc").read_text().splitlines()
    trunc.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in lines))
    store = _store(tmp_path, te / "qrels.test", {"trunc": trunc})
    ev = evaluate(store, spec=EvalSpec(k=10, rel=1, key_rel=1, resamples=10))
    assert ev.summaries["trunc"].missing == 1
    assert _check_against(ev, "trunc", _expected(te / "out.test.aqc")) == 12
    assert ev.per_query("trunc")["302"] == {str(m): 0.0 for m in ev.measures}


def test_trec_rag_ids_with_hash(shared_data: Path, tmp_path: Path) -> None:
    """qrels.comment.test: MS MARCO v2.1 segment ids with '#', graded 0-3; run of 301 topics."""
    te = shared_data / "trec_eval_test"
    store = _store(tmp_path, te / "qrels.comment.test", {"rag": te / "results.comment.test"})
    ev = evaluate(store, spec=EvalSpec(resamples=10))  # defaults: nR at grade >= 2, R at grade >= 3
    assert len(ev.qids) == 31
    at2 = _pytrec(te / "qrels.comment.test", te / "results.comment.test", 10, 2)
    at3 = _pytrec(te / "qrels.comment.test", te / "results.comment.test", 10, 3)
    for qid, values in ev.per_query("rag").items():
        for name, reference in (
            ("nDCG@10", at2[qid]["ndcg_cut_10"]),
            ("nR@10", at2[qid]["relative_P_10"]),
            ("R(rel=3)@10", at3[qid]["recall_10"]),
        ):
            mine = values[name]
            assert (0.0 if mine is None else mine) == pytest.approx(reference, abs=1e-9), (
                qid,
                name,
            )


def test_dl19_matches_published_and_pytrec_eval(shared_data: Path, tmp_path: Path) -> None:
    """DL19: means equal STATS.tsv (nDCG, judged, grade-3 recall at 10), per query pytrec_eval."""
    dl = shared_data / "trec-dl"
    runs = {p.name.removesuffix(".trec"): p for p in sorted((dl / "runs" / "dl19").glob("*.trec"))}
    qrels = dl / "qrels" / "qrels.dl19-passage.txt"
    store = _store(tmp_path, qrels, runs)
    ev = evaluate(store, spec=EvalSpec(resamples=200))
    with (dl / "STATS.tsv").open() as fh:
        stats = {r["run"].removesuffix(".trec"): r for r in csv.DictReader(fh, delimiter="\t")}
    for name, path in runs.items():
        s = ev.summaries[name]
        assert s.mean["nDCG@10"] == pytest.approx(float(stats[name]["ndcg@10"]), abs=5e-5)
        assert s.judged == pytest.approx(float(stats[name]["frac_judged"]), abs=5e-4)
        assert s.mean["R(rel=3)@10"] == pytest.approx(
            float(stats[name]["grade3_recall@10"]), abs=5e-5
        )
        at2, at3 = _pytrec(qrels, path, 10, 2), _pytrec(qrels, path, 10, 3)
        for qid, values in ev.per_query(name).items():
            assert values["nDCG@10"] == pytest.approx(at2[qid]["ndcg_cut_10"], abs=1e-9)
            assert values["nR@10"] == pytest.approx(at2[qid]["relative_P_10"], abs=1e-9)
            key = values["R(rel=3)@10"]
            assert (0.0 if key is None else key) == pytest.approx(at3[qid]["recall_10"], abs=1e-9)
    # 7 DL19 queries have no grade-3 passage: left out of R(rel=3)@10, kept everywhere else.
    assert (ev.n("nDCG@10"), ev.n("R(rel=3)@10"), ev.n("nR@10"), ev.n("Judged@10")) == (
        43,
        36,
        43,
        43,
    )
    assert all(math.isfinite(v) for v in ev.values["Judged@10"].ravel())


def test_dl19_judged_is_pool_summary_judged(shared_data: Path, tmp_path: Path) -> None:
    """The gate's judged@k is pooling's judged@k: same queries, same number (k = 10 and 5)."""
    dl = shared_data / "trec-dl"
    runs = {p.stem: p for p in sorted((dl / "runs" / "dl19").glob("*.trec"))}
    store = _store(tmp_path, dl / "qrels" / "qrels.dl19-passage.txt", runs)
    for k in (10, 5):
        ev = evaluate(store, spec=EvalSpec(k=k, resamples=10))
        for row in pool_summary(store, PoolSpec(depth=k)).runs:
            assert ev.summaries[row.run].judged == pytest.approx(row.judged, abs=1e-12)
            assert ev.summaries[row.run].holes == row.holes
