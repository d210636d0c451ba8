"""Property tests: on random qrels and runs, every per-query value equals trec_eval's.

Hypothesis draws qrels with grades -2..4 (negative ones included), queries with no relevant doc
or no label at all, runs with many score ties (scores from a handful of values), runs missing
queries, and ids whose byte order differs from their "natural" order ("d10" < "d2", "B" < "a").
Both go through our real ingest into a fresh database; the reference is pytrec_eval (trec_eval's
code) for nDCG, R and nR, and for Judged@k a direct transcription of its definition in
trec_eval's tie order (score descending, then doc id descending): ir-measures' Judged breaks
ties by doc id ascending (its issue #18), so it is compared only on tie-free rankings.

pytrec_eval crashes on a query whose every label is negative (trec_eval sizes an array by the
highest grade); such queries are left out of the reference: they have no relevant doc, so ours
must have no value there either, which is asserted.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.pool import PoolSpec, pool_summary
from judgepool.pooling.store.connection import Store

QIDS = ("q1", "q2", "q3", "q4", "q5")
DOCS = ("d1", "d10", "d2", "D3", "a", "B", "d#4", "x:5", "y/6", "z")
SCORES = (-1.0, 0.0, 0.5, 1.0, 1.0, 2.25, 3.0)

Ranking = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]

qrels_st = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 4), min_size=1, max_size=8),
    min_size=1,
    max_size=5,
)
ranking_st = st.dictionaries(
    st.sampled_from(QIDS),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from(SCORES), min_size=1, max_size=10),
    min_size=1,
    max_size=5,
)

# Function-scoped fixtures (tmp_path, the autouse isolation) are fine here: every example writes
# its files and database under a fresh uuid name, so examples never see each other's state.
_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _build(tmp_path: Path, qrels: Qrels, runs: list[Ranking]) -> tuple[Store, list[str]]:
    folder = tmp_path / uuid.uuid4().hex
    folder.mkdir()
    store = Store(folder / "eval.duckdb")
    (folder / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    ingest_qrels(store, folder / "qrels.txt")
    names = []
    for i, ranking in enumerate(runs):
        name = f"run{i}"
        lines = [
            f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in ranking.items() for d, s in docs.items()
        ]
        (folder / f"{name}.trec").write_text("".join(lines))
        ingest_run(store, folder / f"{name}.trec", name=name)
        names.append(name)
    return store, names


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by doc id descending (byte order)."""
    by_id = sorted(docs, key=lambda d: d.encode(), reverse=True)
    return sorted(by_id, key=lambda d: -docs[d])


def judged_reference(qrels: Qrels, ranking: Ranking, k: int) -> dict[str, float]:
    """Judged@k per query of the evaluation set, in trec_eval's tie order; missing = 0."""
    out = {}
    for qid, labels in qrels.items():
        top = trec_order(ranking.get(qid, {}))[:k]
        out[qid] = sum(d in labels for d in top) / len(top) if top else 0.0
    return out


def pytrec(qrels: Qrels, ranking: Ranking, k: int, rel: int) -> dict[str, dict[str, float]]:
    import pytrec_eval

    usable = {q: d for q, d in qrels.items() if max(d.values()) >= 0}
    names = {f"ndcg_cut.{k}", f"recall.{k}", f"relative_P.{k}"}
    evaluator = pytrec_eval.RelevanceEvaluator(usable, names, relevance_level=rel)
    return evaluator.evaluate({q: d for q, d in ranking.items() if q in usable})  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.slow
@_SETTINGS
@given(
    qrels=qrels_st,
    runs=st.lists(ranking_st, min_size=1, max_size=3),
    k=st.sampled_from([1, 2, 3, 5, 10]),
    rel=st.integers(1, 3),
    key_rel=st.integers(1, 4),
)
def test_per_query_values_equal_trec_eval(
    tmp_path: Path, qrels: Qrels, runs: list[Ranking], k: int, rel: int, key_rel: int
) -> None:
    store, names = _build(tmp_path, qrels, runs)
    ev = evaluate(store, spec=EvalSpec(k=k, rel=rel, key_rel=key_rel, resamples=5))
    assert ev.qids == tuple(sorted(qrels))  # every query with a label, and only those
    ndcg, key, nr, judged = (str(m) for m in ev.measures)
    pooled = {r.run: r for r in pool_summary(store, PoolSpec(depth=k)).runs}
    for name, ranking in zip(names, runs, strict=True):
        at_rel, at_key = pytrec(qrels, ranking, k, rel), pytrec(qrels, ranking, k, key_rel)
        ours = ev.per_query(name)
        expected_judged = judged_reference(qrels, ranking, k)
        for qid, labels in qrels.items():
            values = ours[qid]
            assert values[judged] == pytest.approx(expected_judged[qid], abs=1e-12)
            grades = list(labels.values())
            for measure, level, reference, field in (
                (ndcg, 1, at_rel, f"ndcg_cut_{k}"),
                (key, key_rel, at_key, f"recall_{k}"),
                (nr, rel, at_rel, f"relative_P_{k}"),
            ):
                if not any(g >= level for g in grades):
                    assert values[measure] is None, (qid, measure)  # left out of the mean
                    continue
                expected = reference[qid][field] if qid in reference else 0.0
                assert values[measure] == pytest.approx(expected, abs=1e-9), (qid, measure)
        # The gate's number is pooling's judged@k, to the last bit that matters.
        assert ev.summaries[name].judged == pytest.approx(pooled[name].judged, abs=1e-12)
        assert ev.summaries[name].holes == pooled[name].holes


@pytest.mark.slow
@settings(_SETTINGS, max_examples=25)
@given(qrels=qrels_st, run=ranking_st, k=st.sampled_from([1, 3, 10]))
def test_judged_equals_ir_measures_without_ties(
    tmp_path: Path, qrels: Qrels, run: Ranking, k: int
) -> None:
    import ir_measures

    # Distinct scores: the tie order cannot matter, so ir-measures' Judged must agree.
    run = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in run.items()}
    store, _ = _build(tmp_path, qrels, [run])
    ev = evaluate(store, spec=EvalSpec(k=k, resamples=5))
    ours = ev.per_query("run0")
    measure = ir_measures.parse_measure(f"Judged@{k}")
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    for qid in qrels:
        assert ours[qid][f"Judged@{k}"] == pytest.approx(theirs.get(qid, 0.0), abs=1e-12)


def test_judged_keeps_trec_eval_tie_order(tmp_path: Path) -> None:
    """Three docs tie; trec_eval ranks c, b, a (id descending), ir-measures a, b, c (#18)."""
    import ir_measures

    qrels: Qrels = {"q": {"a": 1, "c": 0}}
    run: Ranking = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    store, _ = _build(tmp_path, qrels, [run])
    ev = evaluate(store, spec=EvalSpec(k=1, resamples=5))
    assert ev.per_query("run0")["q"]["Judged@1"] == 1.0  # c is first and labelled
    ev2 = evaluate(store, spec=EvalSpec(k=2, resamples=5))
    assert ev2.per_query("run0")["q"]["Judged@2"] == 0.5  # c, b
    theirs = next(ir_measures.iter_calc([ir_measures.parse_measure("Judged@2")], qrels, run))
    assert theirs.value == 0.5  # a, b: same count here, by luck of the labels
    qrels_b: Qrels = {"q": {"a": 1}}
    store_b, _ = _build(tmp_path, qrels_b, [run])
    assert (
        evaluate(store_b, spec=EvalSpec(k=1, resamples=5)).per_query("run0")["q"]["Judged@1"] == 0.0
    )
    theirs_b = next(ir_measures.iter_calc([ir_measures.parse_measure("Judged@1")], qrels_b, run))
    assert theirs_b.value == 1.0  # ir-measures puts a first: the documented difference
