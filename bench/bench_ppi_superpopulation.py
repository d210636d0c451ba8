"""PPI for a population of queries (a synthetic check beside bench_ppi_coverage.py, issue 13).

bench_ppi_coverage.py scores the intervals against the mean over DL19's 43 queries: one fixed
query set, so it tests the judge-error part of an interval, not the query-sampling part. The plain
bootstrap claims more: a mean over a population of queries like these. This script asks whether
the PPI++ interval holds that claim too, on a Gaussian toy where the population mean is known:
per query Y ~ N(0, 1) (the human value), f = Y + 0.2 + noise * N(0, 1) (the judge's, biased by
0.2), N = 43 queries drawn afresh each replication, n of them audited uniformly at random.

Designs (95% intervals):
- overlap, z: metrics.ppi.ppi_mean, i.e. ppi_py's ppi_mean_ci with Yhat_unlabeled = all N
  queries' f, the audited ones included (what the product does);
- overlap, t: the same estimate and lambda, variances with divisor - 1, t(n - 1) quantile;
- disjoint, z: ppi_py's ppi_mean_ci with Yhat_unlabeled = only the N - n unaudited queries' f
  (the textbook PPI setting: labelled and unlabelled samples independent);
- slope, z and slope, t: the overlap design with lambda = cov(Y, f) / var(f) on the audit (the
  regression slope, not clipped) and the same variance formula, z or (divisor - 1) t(n - 1);
- judgepool: metrics.ppi.ppi_mean with the PRODUCT method (what compare reports): the slope
  clipped to [0, 1], the nested-design variance with its cross term, t(n - 1).
  With the audited queries among the N the variance of the estimate is
  var(Y - lam f) / n + (lam^2 var(f) + 2 lam cov(Y - lam f, f)) / N; the formula drops the last
  term, which is 0 at the slope but not at PPI++'s lam = slope / (1 + n / N).

Run: .venv/bin/python bench/bench_ppi_superpopulation.py [--reps 20000]
Writes bench/results/ppi_superpopulation.json and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from judgepool.metrics.ppi import PPI_PY, PRODUCT, ppi_mean, tuned_lambda  # noqa: E402

QUERIES = 43
SIZES = (10, 15, 20)
NOISES = (0.1, 0.3, 1.0)
BIAS = 0.2
DESIGNS = ("overlap, z", "overlap, t", "disjoint, z", "slope, z", "slope, t", "judgepool")


def intervals(
    f: np.ndarray, y: np.ndarray, at: np.ndarray, z: float, t: float
) -> dict[str, tuple[float, float]]:
    """Every design's interval for one replication."""
    n, size = at.size, f.size
    fa = f[at]
    out: dict[str, tuple[float, float]] = {}
    est = ppi_mean(f, y, at, method=PPI_PY)
    if est.ci is None or est.lam is None or est.estimate is None:
        raise RuntimeError(f"no interval: {est.reason}")
    out["overlap, z"] = est.ci
    lam = est.lam
    residual = y - lam * fa
    se = np.sqrt(lam**2 * f.var(ddof=1) / size + residual.var(ddof=1) / n)
    out["overlap, t"] = (est.estimate - t * se, est.estimate + t * se)
    rest = np.setdiff1d(np.arange(size), at)
    fu, m = f[rest], size - n
    lam_d = tuned_lambda(y, fa, fu)
    residual = y - lam_d * fa
    centre = lam_d * fu.mean() + residual.mean()
    se = np.sqrt(lam_d**2 * fu.var() / m + residual.var() / n)
    out["disjoint, z"] = (centre - z * se, centre + z * se)
    slope = float(np.cov(y, fa)[0, 1] / fa.var(ddof=1))
    residual = y - slope * fa
    centre = slope * f.mean() + residual.mean()
    se = np.sqrt(slope**2 * f.var() / size + residual.var() / n)
    out["slope, z"] = (centre - z * se, centre + z * se)
    se = np.sqrt(slope**2 * f.var(ddof=1) / size + residual.var(ddof=1) / n)
    out["slope, t"] = (centre - t * se, centre + t * se)
    product = ppi_mean(f, y, at, method=PRODUCT).ci
    if product is None:
        raise RuntimeError("no interval from the PRODUCT method")
    out["judgepool"] = product
    return out


def simulate(reps: int, seed: int) -> dict[str, Any]:
    """Coverage of the population mean 0 and mean width, per noise x audit size x design."""
    from scipy.stats import t as t_dist

    rng = np.random.default_rng(seed)
    z = NormalDist().inv_cdf(0.975)
    rows = []
    for noise in NOISES:
        for n in SIZES:
            t = float(t_dist.ppf(0.975, n - 1))
            covered = dict.fromkeys(DESIGNS, 0)
            width = dict.fromkeys(DESIGNS, 0.0)
            for _ in range(reps):
                y_all = rng.normal(size=QUERIES)
                f = y_all + BIAS + noise * rng.normal(size=QUERIES)
                at = np.sort(rng.choice(QUERIES, n, replace=False))
                for design, (low, high) in intervals(f, y_all[at], at, z, t).items():
                    covered[design] += int(low <= 0.0 <= high)
                    width[design] += high - low
            rows += [
                {
                    "noise": noise,
                    "audited": n,
                    "design": d,
                    "coverage": covered[d] / reps,
                    "mean_width": width[d] / reps,
                }
                for d in DESIGNS
            ]
    return {"reps": reps, "seed": seed, "queries": QUERIES, "bias": BIAS, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    result = simulate(args.reps, args.seed)
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = HERE / "results" / "ppi_superpopulation.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{args.reps} replications per row; population mean 0; N = {QUERIES}")
    print(f"{'noise':>5} {'n':>3} {'design':14} {'coverage':>8} {'width':>7}")
    for row in result["rows"]:
        print(
            f"{row['noise']:5.1f} {row['audited']:3d} {row['design']:14} "
            f"{100 * row['coverage']:7.1f}% {row['mean_width']:7.3f}"
        )
    print(f"{result['seconds']} s; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
