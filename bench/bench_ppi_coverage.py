"""PPI coverage benchmark (issue 13): does the judge-corrected interval cover the truth when a
simulated judge fills the holes, where the plain bootstrap trusts the judge?

Data, label worlds ("shallow": only BM25's top-10 labels kept, as the issue says; "deep": every
NIST label kept but the holes'), truths ("nist": full qrels; "pool": human labels on the whole
pool, what PPI estimates) and the policy for undefined queries: bench/ppi_dl19.py.

The simulated judge: rows = true grade, columns = judge grade. Each replication draws a judge (each
row from a Dirichlet of concentration 100 around the base row, so judges differ in leniency) and
labels every hole independently from its true grade's row. Setting "uniform": one matrix for all
holes. Setting "neural-worse": holes in the top 10 of a neural run (tasb, splade-pp-ed,
openai-ada2, repllama) use the worse, more lenient matrix, holes only in BM25-RM3's top 10 the base
one (BM25's own top 10 has no holes: its labels are the kept human ones).

An audited query has the NIST grade on every judge-labelled pair of its pool (a query counts as
audited when all of them have a human label), so its human value Y is its "pool" value. Each
replication draws one uniform random order of the 43 queries and audits its first 10, 15 and 20
(nested samples).

Estimators (95% intervals):
- plain: the product's paired percentile bootstrap over the 43 queries (metrics.bootstrap, 10,000
  resamples, default seed) of the judge-filled differences, the audit ignored;
- plain+audit: the same with the audited queries' human values in place (what compare shows once
  the audit's labels are effective);
- judgepool: what compare reports, metrics.ppi.ppi_mean with the PRODUCT method (lambda = the
  slope clipped to [0, 1], the nested-design variance, a t(n - 1) quantile);
- ppi_py: metrics.ppi.ppi_mean with the PPI_PY method (ppi_py's PPI++ lambda and normal interval);
- audit-only: the audited human values alone (the PRODUCT interval with lambda = 0: a t interval).

Run: .venv/bin/python bench/bench_ppi_coverage.py [--reps 2000] [--seed 13] [--resamples 10000]
Writes bench/results/ppi_coverage.json and prints the tables. Target: judgepool's coverage >= 93 %.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from ppi_dl19 import (  # noqa: E402
    COMPARED,
    COMPARISONS,
    World,
    build_world,
    check_truth,
    differences,
    load_collection,
    nist_values,
    values,
)

from judgepool import defaults  # noqa: E402
from judgepool.metrics import bootstrap  # noqa: E402
from judgepool.metrics.ppi import PPI_PY, PRODUCT, ppi_mean  # noqa: E402

SIZES = (10, 15, 20)
# Accuracy by true grade 75/50/30/45 %; off the diagonal, errors lean towards the higher grade.
BASE = np.array(
    [
        [0.75, 0.15, 0.07, 0.03],
        [0.10, 0.50, 0.28, 0.12],
        [0.03, 0.17, 0.30, 0.50],
        [0.02, 0.08, 0.45, 0.45],
    ]
)
# Worse and more lenient (60/40/25/40 %): used on the neural runs' holes in "neural-worse".
WORSE = np.array(
    [
        [0.60, 0.22, 0.12, 0.06],
        [0.07, 0.40, 0.35, 0.18],
        [0.02, 0.13, 0.25, 0.60],
        [0.01, 0.06, 0.53, 0.40],
    ]
)
CONCENTRATION = 100.0
JUDGES = ("uniform", "neural-worse")
WORLDS = ("shallow", "deep")
ESTIMATORS = ("plain", "plain+audit", "judgepool", "ppi_py", "audit-only")


def draw_judges(world: World, judge: str, reps: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """(reps, holes) the grades `reps` simulated judges give the holes."""
    holes = world.hole_truth.size
    base = np.stack([rng.dirichlet(CONCENTRATION * row, size=reps) for row in BASE], axis=1)
    worse = np.stack([rng.dirichlet(CONCENTRATION * row, size=reps) for row in WORSE], axis=1)
    neural = world.hole_neural if judge == "neural-worse" else np.zeros(holes, dtype=bool)
    rows = np.where(
        neural[None, :, None], worse[:, world.hole_truth], base[:, world.hole_truth]
    )  # (reps, holes, 4)
    u = rng.random((reps, holes))
    grades: NDArray[np.int64] = (u[:, :, None] > np.cumsum(rows, axis=2)[:, :, :3]).sum(axis=2)
    return grades


def bootstrap_intervals(
    diffs: NDArray[np.float64], resamples: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile intervals of (..., queries) differences, each row on its own: (low, high)."""
    flat = diffs.reshape(-1, diffs.shape[-1]).T  # (queries, rows)
    low, high = np.empty(flat.shape[1]), np.empty(flat.shape[1])
    for start in range(0, flat.shape[1], 600):  # bound memory: resamples x 600 means
        cols = slice(start, start + 600)
        means = bootstrap.bootstrap_means(
            np.ascontiguousarray(flat[:, cols]), resamples, defaults.SEED
        )
        low[cols], high[cols] = bootstrap.percentile_interval(means)
    return low.reshape(diffs.shape[:-1]), high.reshape(diffs.shape[:-1])


def audit_intervals(
    judged: NDArray[np.float64],
    human: NDArray[np.float64],
    order: NDArray[np.int64],
    size: int,
    resamples: int,
    alpha: float,
) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.float64]]:
    """estimator -> (comparisons, reps, 2) intervals with the first `size` of `order` audited."""
    comparisons, reps, nq = judged.shape
    mixed = judged.copy()
    mask = np.zeros((reps, nq), dtype=bool)
    np.put_along_axis(mask, order[:, :size], True, axis=1)
    mixed[:, mask] = np.broadcast_to(human[:, None, :], judged.shape)[:, mask]
    out = {"plain+audit": np.stack(bootstrap_intervals(mixed, resamples), axis=-1)}
    for name in ("judgepool", "ppi_py", "audit-only"):
        out[name] = np.empty((comparisons, reps, 2))
    lams = np.empty((comparisons, reps))
    for c in range(comparisons):
        for r in range(reps):
            at = np.sort(order[r, :size])
            f, y = judged[c, r], human[c, at]
            est = ppi_mean(f, y, at, alpha=alpha, method=PRODUCT)
            ref = ppi_mean(f, y, at, alpha=alpha, method=PPI_PY)
            alone = ppi_mean(f, y, at, alpha=alpha, lam=0.0, method=PRODUCT)
            if est.ci is None or est.lam is None or ref.ci is None or alone.ci is None:
                raise RuntimeError(f"no interval: {est.reason or ref.reason or alone.reason}")
            out["judgepool"][c, r], out["ppi_py"][c, r] = est.ci, ref.ci
            out["audit-only"][c, r], lams[c, r] = alone.ci, est.lam
    return out, lams


def simulate(
    root: Path,
    reps: int = 2000,
    seed: int = 13,
    resamples: int = defaults.RESAMPLES,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Every world x judge x comparison x audit size x estimator: coverage and mean width."""
    col = load_collection(root)
    nist = nist_values(col)
    truth_gap = check_truth(root, col, nist)
    nq = len(col.qids)
    nist_truth = differences({m: v[:, None, :] for m, v in nist.items()})[:, 0]  # (comp, q)
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(seed)
    for world_name in WORLDS:
        world = build_world(col, world_name)
        human = differences(values(world, world.hole_truth[None]))[:, 0]  # (comp, queries) = Y
        if world_name == "deep" and not np.allclose(human, nist_truth, rtol=0, atol=1e-12):
            raise RuntimeError("deep world with every human label back is not the NIST truth")
        truths = {"nist": nist_truth.mean(axis=1), "pool": human.mean(axis=1)}
        for judge in JUDGES:
            judged = differences(values(world, draw_judges(world, judge, reps, rng)))
            order = np.argsort(rng.random((reps, nq)), axis=1)  # one audit order per rep
            plain = np.stack(bootstrap_intervals(judged, resamples), axis=-1)
            for size in SIZES:
                intervals, lams = audit_intervals(judged, human, order, size, resamples, alpha)
                intervals["plain"] = plain
                for c, (cand, base, measure) in enumerate(COMPARISONS):
                    for estimator in ESTIMATORS:
                        ci = intervals[estimator][c]
                        row = {
                            "world": world_name,
                            "judge": judge,
                            "comparison": f"{cand} - {base} {measure}",
                            "audited": size,
                            "estimator": estimator,
                            "mean_width": float((ci[:, 1] - ci[:, 0]).mean()),
                            "mean_lambda": (
                                float(lams[c].mean()) if estimator == "judgepool" else None
                            ),
                            "judge_bias": float(judged[c].mean() - truths["pool"][c]),
                        }
                        for kind, value in truths.items():
                            row[f"truth_{kind}"] = float(value[c])
                            covered = (ci[:, 0] <= value[c]) & (value[c] <= ci[:, 1])
                            row[f"coverage_{kind}"] = float(covered.mean())
                        rows.append(row)
    return {
        "reps": reps,
        "seed": seed,
        "resamples": resamples,
        "alpha": alpha,
        "queries": nq,
        "truth_vs_pytrec_eval_max_abs": truth_gap,
        "nist_means": {
            m: {run: float(np.nanmean(v[i])) for i, run in enumerate(COMPARED)}
            for m, v in nist.items()
        },
        "rows": rows,
    }


def print_table(result: dict[str, Any], truth: str = "pool") -> None:
    """One line per world x judge x comparison x audit size: each estimator's coverage, width."""
    cells: dict[tuple[str, str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in result["rows"]:
        cells[row["world"], row["judge"], row["comparison"], row["audited"]][row["estimator"]] = row
    head = f"{'world':7} {'judge':12} {'comparison':28} {'n':>2}"
    print(head + "".join(f" | {e:>12}" for e in ESTIMATORS))
    for (world, judge, comparison, size), by in cells.items():
        line = f"{world:7} {judge:12} {comparison:28} {size:2}"
        for estimator in ESTIMATORS:
            row = by[estimator]
            line += f" | {100 * row[f'coverage_{truth}']:5.1f}% {row['mean_width']:.3f}"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--resamples", type=int, default=defaults.RESAMPLES)
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    args = parser.parse_args()
    root = args.data / "trec-dl"
    if not root.is_dir():
        print(f"shared data absent: {root}")
        return 2
    started = time.perf_counter()
    result = simulate(root, args.reps, args.seed, args.resamples)
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = HERE / "results" / "ppi_coverage.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{result['reps']} simulated judges x audit samples per setting, {result['resamples']} "
        f"bootstrap resamples, truth vs pytrec_eval {result['truth_vs_pytrec_eval_max_abs']:.1e}"
    )
    print("coverage of the pool truth (what PPI estimates; = the NIST truth in the deep world)")
    print_table(result, "pool")
    print("coverage of the full-NIST truth")
    print_table(result, "nist")
    short = [
        r for r in result["rows"] if r["estimator"] == "judgepool" and r["coverage_pool"] < 0.93
    ]
    print(f"{result['seconds']} s; wrote {out}; judgepool under 93 % (pool truth): {len(short)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
