"""DL19 for the PPI coverage simulation (bench/bench_ppi_coverage.py): runs, label worlds, truth.

TREC DL 2019 passage from ../shared/data/trec-dl: 43 judged queries, NIST qrels, six runs. The pool
is the depth-10 union of all six runs; compared: tasb - bm25 and splade-pp-ed - tasb on nDCG@10,
tasb - bm25 on R(rel=3)@10. Per-query values come from the product's metrics.compute.per_query.

Two label worlds (what the evaluation sees as human labels):
- shallow (the issue's setting): only the NIST labels of BM25's top 10 are kept; every other pair
  of the pool is a hole, filled by the judge, and the query has no other label (ideal DCG and the
  R denominator come from these labels only);
- deep: every NIST label is kept except those of the holes (pairs of the pool outside BM25's top
  10), which the judge fills; with all human labels back the values are exactly the NIST ones.
A pool pair NIST never labelled has true grade 0 (trec_eval counts it non-relevant).

Truths: "nist" = the measure with the full NIST qrels (`check_truth`: per query against
pytrec_eval); "pool" = the measure with NIST labels on every pool pair and no other label, what a
complete human audit of the pool gives, hence what PPI estimates. The two coincide in the deep
world and differ in the shallow one (the pool misses relevant documents NIST found deeper, which
changes the ideal DCG and the R denominators). A per-query difference on a query where the measure
is undefined under the labels in use (no doc at its threshold) counts as 0 (both runs score 0 of
nothing), and every mean is over all 43 queries; so the R truth is the trec_eval mean over its 36
defined queries times 36/43.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judgepool.metrics.compute import per_query
from judgepool.metrics.load import Labels, TopK
from judgepool.metrics.measures import Measure, parse_measure

RUNS = ("bm25", "bm25-rm3", "tasb", "splade-pp-ed", "openai-ada2", "repllama")
NEURAL = ("tasb", "splade-pp-ed", "openai-ada2", "repllama")
COMPARED = ("bm25", "tasb", "splade-pp-ed")
# (candidate, baseline, measure)
COMPARISONS = (
    ("tasb", "bm25", "nDCG@10"),
    ("splade-pp-ed", "tasb", "nDCG@10"),
    ("tasb", "bm25", "R(rel=3)@10"),
)
K = 10
GRADES = np.arange(4)


@dataclass(frozen=True)
class Collection:
    """DL19 as arrays: queries, each run's top 10 (doc ids), NIST qrels."""

    qids: tuple[str, ...]
    top: dict[str, list[list[str]]]  # run -> per query, its top-10 doc ids in trec_eval order
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True)
class World:
    """What the evaluation sees: fixed labels, and the holes the judge fills."""

    name: str
    top_fixed: NDArray[np.float64]  # (compared runs, queries, K) grade, NaN where a hole
    top_hole: NDArray[np.int64]  # (compared runs, queries, K) hole index, -1 where fixed
    fixed_counts: NDArray[np.int64]  # (queries, 4) fixed labels per grade
    hole_query: NDArray[np.int64]  # (holes,) query of each hole
    hole_truth: NDArray[np.int64]  # (holes,) NIST grade (0 when NIST has none)
    hole_neural: NDArray[np.bool_]  # (holes,) in a neural run's top 10


def load_collection(root: Path, year: str = "dl19") -> Collection:
    """The judged queries (43 in DL19, 54 in DL20), the six runs' top 10 (score desc, then doc
    id desc), the qrels."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (root / "qrels" / f"qrels.{year}-passage.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels[qid][doc] = int(grade)
    qids = tuple(sorted(qrels))
    top: dict[str, list[list[str]]] = {}
    for run in RUNS:
        rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
        path = root / "runs" / year / f"{year}-passage.{run}.top100.trec"
        for line in path.read_text().splitlines():
            qid, _, doc, _, score, _ = line.split()
            rows[qid].append((float(score), doc))
        top[run] = [[d for _, d in sorted(rows[q], reverse=True)[:K]] for q in qids]
    return Collection(qids, top, dict(qrels))


def build_world(col: Collection, name: str) -> World:
    """The fixed labels and the holes of one label world (see the module docstring)."""
    nq = len(col.qids)
    fixed = np.zeros((nq, 4), dtype=np.int64)
    hole_of: dict[tuple[int, str], int] = {}
    hole_query: list[int] = []
    hole_truth: list[int] = []
    hole_neural: list[bool] = []
    for qi, qid in enumerate(col.qids):
        kept = set(col.top["bm25"][qi])
        pool = dict.fromkeys(d for run in RUNS for d in col.top[run][qi])
        for doc in pool:
            if doc in kept:
                continue
            hole_of[qi, doc] = len(hole_query)
            hole_query.append(qi)
            hole_truth.append(col.qrels[qid].get(doc, 0))
            hole_neural.append(any(doc in col.top[run][qi] for run in NEURAL))
        labelled = kept if name == "shallow" else set(col.qrels[qid]) - set(pool) | kept
        for doc in labelled:
            fixed[qi, col.qrels[qid].get(doc, 0)] += 1
    top_fixed = np.full((len(COMPARED), nq, K), np.nan)
    top_hole = np.full((len(COMPARED), nq, K), -1, dtype=np.int64)
    for ri, run in enumerate(COMPARED):
        for qi, qid in enumerate(col.qids):
            for rank, doc in enumerate(col.top[run][qi]):
                if (qi, doc) in hole_of:
                    top_hole[ri, qi, rank] = hole_of[qi, doc]
                else:
                    top_fixed[ri, qi, rank] = col.qrels[qid].get(doc, 0)
    return World(
        name,
        top_fixed,
        top_hole,
        fixed,
        np.asarray(hole_query, dtype=np.int64),
        np.asarray(hole_truth, dtype=np.int64),
        np.asarray(hole_neural, dtype=bool),
    )


def values(
    world: World, hole_grades: NDArray[np.int64], measures: tuple[str, ...] = ()
) -> dict[str, NDArray[np.float64]]:
    """measure -> (compared runs, reps, queries) per-query values, one rep per row of grades
    (`measures`, default: those of COMPARISONS)."""
    reps, nq = hole_grades.shape[0], world.fixed_counts.shape[0]
    safe = np.maximum(world.top_hole, 0)
    cube = np.where(world.top_hole[None] >= 0, hole_grades[:, safe], world.top_fixed[None])
    # (reps, runs, queries, K) -> (runs, reps * queries, K): the reps become extra "queries".
    grades = cube.transpose(1, 0, 2, 3).reshape(len(COMPARED), reps * nq, K)
    cell = world.hole_query[None, :] * 4 + hole_grades
    cell = cell + (np.arange(reps) * nq * 4)[:, None]
    counts = np.bincount(cell.ravel(), minlength=reps * nq * 4).reshape(reps, nq, 4)
    counts = counts + world.fixed_counts[None]
    top = TopK(grades, np.full((len(COMPARED), reps * nq), K, dtype=np.int64))
    labels = Labels(GRADES.astype(np.int64), counts.reshape(reps * nq, 4))
    out = {}
    for name in measures or {m for _, _, m in COMPARISONS}:
        measure: Measure = parse_measure(name)
        out[name] = per_query(measure, top, labels).reshape(len(COMPARED), reps, nq)
    return out


def differences(vals: dict[str, NDArray[np.float64]]) -> NDArray[np.float64]:
    """(comparisons, reps, queries) candidate - baseline, 0 where the measure is undefined."""
    rows = []
    for cand, base, name in COMPARISONS:
        diff = vals[name][COMPARED.index(cand)] - vals[name][COMPARED.index(base)]
        rows.append(np.nan_to_num(diff, nan=0.0))
    return np.stack(rows)


def nist_values(col: Collection) -> dict[str, NDArray[np.float64]]:
    """measure -> (compared runs, queries) with the full NIST qrels."""
    nq = len(col.qids)
    grades = np.array(
        [
            [[col.qrels[q].get(d, 0) for d in col.top[r][qi]] for qi, q in enumerate(col.qids)]
            for r in COMPARED
        ],
        dtype=np.float64,
    )
    counts = np.zeros((nq, 4), dtype=np.int64)
    for qi, q in enumerate(col.qids):
        for g in col.qrels[q].values():
            counts[qi, g] += 1
    top = TopK(grades, np.full((len(COMPARED), nq), K, dtype=np.int64))
    labels = Labels(GRADES.astype(np.int64), counts)
    return {m: per_query(parse_measure(m), top, labels) for _, _, m in COMPARISONS}


def check_truth(
    root: Path, col: Collection, nist: dict[str, NDArray[np.float64]], year: str = "dl19"
) -> float:
    """Largest |ours - pytrec_eval| over runs x queries of nDCG@10 and R(rel=3)@10 (NIST qrels)."""
    import pytrec_eval

    worst = 0.0
    for rel, measure, ours in ((1, "ndcg_cut_10", "nDCG@10"), (3, "recall_10", "R(rel=3)@10")):
        evaluator = pytrec_eval.RelevanceEvaluator(col.qrels, {measure}, relevance_level=rel)
        for ri, run in enumerate(COMPARED):
            path = root / "runs" / year / f"{year}-passage.{run}.top100.trec"
            scored: dict[str, dict[str, float]] = defaultdict(dict)
            for line in path.read_text().splitlines():
                qid, _, doc, _, score, _ = line.split()
                scored[qid][doc] = float(score)
            ref = evaluator.evaluate(dict(scored))
            for qi, qid in enumerate(col.qids):
                mine = nist[ours][ri, qi]
                theirs = ref[qid][measure]
                if np.isnan(mine):  # undefined for us (no grade-3 doc): trec_eval says 0
                    worst = max(worst, abs(theirs))
                else:
                    worst = max(worst, abs(mine - theirs))
    return worst
