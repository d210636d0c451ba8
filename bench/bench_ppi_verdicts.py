"""Verdict benchmark (issue 21): do the judge-corrected intervals cover, and is "robust" ever
said of a plain interval that misses, under lenient, harsh and noisy judges, uniform and weighted
audits of 10, 15 and 20 queries, on TREC DL 2019 and 2020?

Each year (bench/ppi_dl19.py reads the data): the judged queries, the six runs' depth-10 pool;
people labelled BM25's top 10 only (NIST's grades), every other pool pair is a hole the judge
fills. The truth is the measure with NIST's grades on the whole pool (what a complete audit gives),
averaged as judgepool averages by default: over the queries with a doc at the measure's threshold
under those labels. Compared: tasb - bm25 and splade-pp-ed - tasb on nDCG@10, R(rel=3)@10 and
nR@10.

A judge is a confusion matrix over the true grade (rows: true grade, columns: the judge's), each
replication's drawn around it (every row from a Dirichlet of concentration 100) and applied to
every hole independently. The audit: "uniform" draws n queries at random; "weighted" draws them
by pooling/audit/design.py's sequential Poisson design with metrics/audit_design.py's uncertainty
score (the prior confusion model, no calibration: what a first audit has), the three runs'
differences scored. An audited query gets NIST's grades on every judge-labelled pair it reads.

For every replication, design and size, as `compare` would show them after the audit:
- plain: the paired percentile bootstrap over the queries the effective labels define
  (metrics.bootstrap, `--resamples` resamples, the product's seed); audited queries carry their
  human values;
- corrected: metrics/ppi_ratio.py's ratio estimator (probabilities for the weighted design), and
  metrics/trust_verdict.py's verdict on the plain figure.

Reported per cell: coverage of the truth by the corrected interval (and by the plain one), their
mean widths, how often the plain interval misses and how often "robust" is said when it does, and
how the verdicts split. Targets: coverage >= 93 %, "robust" of a plain miss <= 5 %.

Run: .venv/bin/python bench/bench_ppi_verdicts.py [--reps 200] [--seed 21] [--resamples 2000]
Writes bench/results/ppi_verdicts.json and prints the table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import typing
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from ppi_dl19 import COMPARED, K, World, build_world, load_collection, values  # noqa: E402

from judgepool import defaults  # noqa: E402
from judgepool.metrics import bootstrap  # noqa: E402
from judgepool.metrics.audit_design import (  # noqa: E402
    AUDIT_PRIOR_WEIGHT,
    JudgeView,
    confusion,
    design_floor,
    expected_errors,
    uncertainty,
)
from judgepool.metrics.load import Labels, TopK  # noqa: E402
from judgepool.metrics.measures import parse_measure  # noqa: E402
from judgepool.metrics.ppi_ratio import corrected_ratio  # noqa: E402
from judgepool.metrics.trust_verdict import Word, judge_verdict  # noqa: E402
from judgepool.pooling.audit.design import inclusion_probabilities, weighted_order  # noqa: E402

WORDS: tuple[Word, ...] = typing.get_args(Word)
YEARS = ("dl19", "dl20")
SIZES = (10, 15, 20)
DESIGNS = ("uniform", "weighted")
MEASURES = ("nDCG@10", "R(rel=3)@10", "nR@10")
PAIRS = (("tasb", "bm25"), ("splade-pp-ed", "tasb"))
CONCENTRATION = 100.0
#: Plain misses a cell needs before its rate of "robust" among them is held to 5 %.
MIN_MISSES = 20
# Rows: true grade 0-3; columns: the judge's grade.
JUDGES = {
    "perfect": np.eye(4),
    "lenient": np.array(
        [
            [0.60, 0.25, 0.10, 0.05],
            [0.10, 0.40, 0.35, 0.15],
            [0.02, 0.10, 0.43, 0.45],
            [0.01, 0.04, 0.25, 0.70],
        ]
    ),
    "harsh": np.array(
        [
            [0.92, 0.06, 0.02, 0.00],
            [0.55, 0.35, 0.08, 0.02],
            [0.25, 0.35, 0.30, 0.10],
            [0.10, 0.20, 0.35, 0.35],
        ]
    ),
    "noisy": np.array(
        [
            [0.70, 0.15, 0.10, 0.05],
            [0.20, 0.45, 0.20, 0.15],
            [0.10, 0.20, 0.45, 0.25],
            [0.05, 0.15, 0.25, 0.55],
        ]
    ),
}


def draw_judges(
    world: World, matrix: NDArray[np.float64], reps: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """(reps, holes) the grades `reps` judges drawn around `matrix` give the holes (the
    identity: every judge gives the true grade)."""
    if np.array_equal(matrix, np.eye(4)):
        return np.repeat(world.hole_truth[None], reps, axis=0)
    rows = np.stack(
        [rng.dirichlet(CONCENTRATION * np.maximum(row, 1e-3), size=reps) for row in matrix], axis=1
    )  # (reps, true grade, judge grade)
    chosen = rows[:, world.hole_truth]  # (reps, holes, 4)
    u = rng.random(chosen.shape[:2])
    grades: NDArray[np.int64] = (u[:, :, None] > np.cumsum(chosen, axis=2)[:, :, :3]).sum(axis=2)
    return grades


def linear(vals: dict[str, NDArray[np.float64]]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """(comparisons, reps, queries) differences (0 where undefined) and (comparisons, reps,
    queries) whether the measure is defined there."""
    diffs, masks = [], []
    for name in MEASURES:
        v = vals[name]
        for cand, base in PAIRS:
            d = v[COMPARED.index(cand)] - v[COMPARED.index(base)]
            ok = ~np.isnan(v[0])
            diffs.append(np.where(ok, np.nan_to_num(d), 0.0))
            masks.append(ok)
    return np.stack(diffs), np.stack(masks)


def comparisons() -> list[str]:
    return [f"{c} - {b} {m}" for m in MEASURES for c, b in PAIRS]


def plain_intervals(
    diffs: NDArray[np.float64], masks: NDArray[np.bool_], resamples: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per column (leading axes): the mean over its defined queries and the product's paired
    percentile bootstrap interval over them (columns with as many queries share resamples, as
    they share the product's seeded draws)."""
    flat_d = diffs.reshape(-1, diffs.shape[-1])
    flat_m = masks.reshape(-1, masks.shape[-1])
    est = np.full(flat_d.shape[0], np.nan)
    low, high = np.full_like(est, np.nan), np.full_like(est, np.nan)
    counts = flat_m.sum(axis=1)
    for count in np.unique(counts):
        if count == 0:
            continue
        cols = np.flatnonzero(counts == count)
        matrix = np.stack([flat_d[c][flat_m[c]] for c in cols], axis=1)  # (count, cols)
        est[cols] = matrix.mean(axis=0)
        for start in range(0, cols.size, 600):
            part = slice(start, start + 600)
            means = bootstrap.bootstrap_means(
                np.ascontiguousarray(matrix[:, part]), resamples, defaults.SEED
            )
            low[cols[part]], high[cols[part]] = bootstrap.percentile_interval(means)
    shape = diffs.shape[:-1]
    return est.reshape(shape), low.reshape(shape), high.reshape(shape)


def judge_view(world: World, grades: NDArray[np.int64]) -> JudgeView:
    """One judge's view of the labels, as metrics/audit_design.py reads it."""
    safe = np.maximum(world.top_hole, 0)
    cube = np.where(world.top_hole >= 0, grades[safe].astype(np.float64), world.top_fixed)
    nq = world.fixed_counts.shape[0]
    counts = world.fixed_counts + np.bincount(
        world.hole_query * 4 + grades, minlength=nq * 4
    ).reshape(nq, 4)
    top = TopK(cube, np.full(cube.shape[:2], K, dtype=np.int64))
    return JudgeView(top, Labels(np.arange(4), counts), world.top_hole, world.hole_query, grades)


def audit_floors(
    world: World,
    grades: NDArray[np.int64],
    audited: NDArray[np.bool_],
    probs: NDArray[np.float64],
    size: int,
    seed: int,
) -> NDArray[np.float64]:
    """(comparisons,) the design-variance floor each corrected figure gets: the relabelling
    model with the confusion the audited pairs show (what metrics.corrected does)."""
    nq = audited.size
    seen = np.isin(world.hole_query, np.flatnonzero(audited))
    observed = np.zeros((4, 4))
    np.add.at(observed, (grades[seen], world.hole_truth[seen]), 1.0)
    matrix = confusion(observed, AUDIT_PRIOR_WEIGHT)
    rows = [(COMPARED.index(c), COMPARED.index(b)) for c, b in PAIRS]
    square, mean = expected_errors(
        judge_view(world, grades),
        [parse_measure(m) for m in MEASURES],
        matrix,
        contrasts=rows,
        draws=100,
        seed=seed,
    )
    pi = probs if (probs < 1.0).any() else np.full(nq, size / nq)
    out = [design_floor(square[m][k], mean[m][k], pi) for m in MEASURES for k in range(len(PAIRS))]
    return np.asarray(out)


def simulate(
    root: Path,
    reps: int = 200,
    seed: int = 21,
    resamples: int = 2000,
    years: tuple[str, ...] = YEARS,
    sizes: tuple[int, ...] = SIZES,
) -> dict[str, Any]:
    """Every year x judge x design x size x comparison: coverage, widths, verdicts."""
    rng = np.random.default_rng(seed)
    measures = [parse_measure(m) for m in MEASURES]
    contrasts = [
        (COMPARED.index(a), COMPARED.index(b)) for a, b in itertools.combinations(COMPARED, 2)
    ]
    prior = confusion()
    rows: list[dict[str, Any]] = []
    names = comparisons()
    for year in years:
        col = load_collection(root, year)
        world = build_world(col, "shallow")
        nq = len(col.qids)
        y_diff, y_ok = linear(values(world, world.hole_truth[None], MEASURES))
        y_diff, y_ok = y_diff[:, 0], y_ok[:, 0]  # (comparisons, queries)
        truth = (y_diff * y_ok).sum(axis=1) / y_ok.sum(axis=1)
        for judge, matrix in JUDGES.items():
            grades = draw_judges(world, matrix, reps, rng)
            f_diff, f_ok = linear(values(world, grades, MEASURES))  # (comp, reps, queries)
            scores = np.stack(
                [
                    uncertainty(
                        judge_view(world, grades[r]), measures, prior, contrasts=contrasts, seed=r
                    )
                    for r in range(reps)
                ]
            )
            uniform_order = np.argsort(rng.random((reps, nq)), axis=1)
            qids = [f"{i:04d}" for i in range(nq)]
            weighted = [
                [int(q) for q in weighted_order(qids, scores[r], seed=r + 1)] for r in range(reps)
            ]
            for design, size in itertools.product(DESIGNS, sizes):
                audited = np.zeros((reps, nq), dtype=bool)
                probs = np.ones((reps, nq))
                for r in range(reps):
                    if design == "uniform":
                        audited[r, uniform_order[r, :size]] = True
                    else:
                        audited[r, weighted[r][:size]] = True
                        audited[r, scores[r] == 0.0] = True
                        probs[r] = inclusion_probabilities(scores[r], size, seed=r + 1)
                        probs[r, scores[r] == 0.0] = 1.0
                floors = np.zeros((len(names), reps))
                for r in range(reps):
                    floors[:, r] = audit_floors(world, grades[r], audited[r], probs[r], size, r)
                eff_d = np.where(audited[None], y_diff[:, None, :], f_diff)
                eff_m = np.where(audited[None], y_ok[:, None, :], f_ok)
                p_est, p_low, p_high = plain_intervals(eff_d, eff_m, resamples)
                for c, name in enumerate(names):
                    stats: dict[str, list[float]] = {
                        k: [] for k in ("cov", "pcov", "acov", "w", "pw", "clip", "miss")
                    }
                    words = dict.fromkeys(WORDS, 0)
                    robust_miss = 0
                    for r in range(reps):
                        at = np.flatnonzero(audited[r])
                        est = corrected_ratio(
                            f_diff[c, r] * f_ok[c, r],
                            f_ok[c, r].astype(np.float64),
                            y_diff[c, at] * y_ok[c, at],
                            y_ok[c, at].astype(np.float64),
                            at,
                            probabilities=None if design == "uniform" else probs[r, at],
                            bounds=(-1.0, 1.0),
                            design_floor=float(floors[c, r]),
                        )
                        ci, audit_ci = est.ci, est.audit_ci
                        if ci is None or audit_ci is None:
                            raise RuntimeError(f"no interval: {name} {r} {est.estimate.reason}")
                        plain = (float(p_low[c, r]), float(p_high[c, r]))
                        miss = not plain[0] <= truth[c] <= plain[1]
                        stats["cov"].append(ci[0] <= truth[c] <= ci[1])
                        stats["acov"].append(audit_ci[0] <= truth[c] <= audit_ci[1])
                        stats["pcov"].append(not miss)
                        stats["w"].append(ci[1] - ci[0])
                        stats["pw"].append(plain[1] - plain[0])
                        stats["clip"].append(est.clipped)
                        stats["miss"].append(miss)
                        verdict = judge_verdict(float(p_est[c, r]), plain, est)
                        if verdict is None:
                            raise RuntimeError("no verdict")
                        words[verdict.word] += 1
                        robust_miss += int(miss and verdict.word == "robust")
                    misses = int(sum(stats["miss"]))
                    rows.append(
                        {
                            "year": year,
                            "judge": judge,
                            "design": design,
                            "audited": size,
                            "comparison": name,
                            "truth": float(truth[c]),
                            "coverage": float(np.mean(stats["cov"])),
                            "audit_coverage": float(np.mean(stats["acov"])),
                            "plain_coverage": float(np.mean(stats["pcov"])),
                            "width": float(np.mean(stats["w"])),
                            "plain_width": float(np.mean(stats["pw"])),
                            "clipped": float(np.mean(stats["clip"])),
                            "plain_misses": misses,
                            "robust_when_plain_misses": robust_miss,
                            "verdicts": words,
                        }
                    )
    return {"reps": reps, "seed": seed, "resamples": resamples, "rows": rows}


def print_table(result: dict[str, Any]) -> None:
    """One line per cell."""
    print(
        f"{'year':4} {'judge':7} {'design':8} {'n':>2} {'comparison':30} {'cover':>6} "
        f"{'plain':>6} {'width x':>7} {'robust|miss':>11} {'robust':>6} {'biased':>6} {'small':>6}"
    )
    for r in result["rows"]:
        v = r["verdicts"]
        total = sum(v.values())
        miss = f"{r['robust_when_plain_misses']}/{r['plain_misses']}"
        print(
            f"{r['year']:4} {r['judge']:7} {r['design']:8} {r['audited']:2} {r['comparison']:30} "
            f"{100 * r['coverage']:5.1f}% {100 * r['plain_coverage']:5.1f}% "
            f"{r['width'] / r['plain_width']:7.2f} {miss:>11} "
            f"{100 * v['robust'] / total:5.1f}% {100 * v['judge-biased'] / total:5.1f}% "
            f"{100 * v['too small to tell'] / total:5.1f}%"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--years", default=",".join(YEARS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    args = parser.parse_args()
    root = args.data / "trec-dl"
    if not root.is_dir():
        print(f"shared data absent: {root}")
        return 2
    started = time.perf_counter()
    result = simulate(
        root,
        args.reps,
        args.seed,
        args.resamples,
        tuple(args.years.split(",")),
        tuple(int(s) for s in args.sizes.split(",")),
    )
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = HERE / "results" / "ppi_verdicts.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print_table(result)
    short = [r for r in result["rows"] if r["coverage"] < 0.93]
    # A rate of 5 % needs misses to be measured on: a cell with a handful of plain misses says
    # nothing about it, so cells count from MIN_MISSES misses, and all cells are pooled too.
    loud = [
        r
        for r in result["rows"]
        if r["plain_misses"] >= MIN_MISSES
        and r["robust_when_plain_misses"] > 0.05 * r["plain_misses"]
    ]
    misses = sum(r["plain_misses"] for r in result["rows"])
    robust = sum(r["robust_when_plain_misses"] for r in result["rows"])
    pooled = robust / misses if misses else 0.0
    print(
        f"{result['seconds']} s; wrote {out}; cells under 93 % coverage: {len(short)}; "
        f"cells (with >= {MIN_MISSES} plain misses) calling more than 5 % of them robust: "
        f"{len(loud)}; all cells: {robust} of {misses} plain misses called robust "
        f"({100 * pooled:.2f} %)"
    )
    return 1 if short or loud or pooled > 0.05 else 0


if __name__ == "__main__":
    sys.exit(main())
