"""The product's judge-corrected interval (metrics.ppi.PRODUCT): slope lambda clipped to [0, 1],
the nested-design variance with its cross term, a t(n - 1) quantile; tied to ppi_py where the two
must agree (the estimate for a given lambda; the interval once variance and quantile are
ppi_py's), written out by hand, and checked by simulation for a population of queries."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from numpy.typing import NDArray
from scipy.stats import t as t_dist

from judgepool.metrics.ppi import PPI_PY, PRODUCT, Method, ppi_mean, ppi_mean_difference
from judgepool.metrics.ppi_size import audit_size_for_width
from judgepool.stats.tdist import t_cdf, t_quantile

TOL = 1e-9


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


def _cases(
    seed: int, count: int
) -> list[tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        size = int(rng.integers(4, 90))
        n = int(rng.integers(2, size))
        at = np.sort(rng.choice(size, n, replace=False))
        f = rng.uniform(0.0, 1.0, size)
        y = np.clip(f[at] * rng.uniform(0.0, 1.5) + rng.normal(0.0, 0.2, n), 0.0, 1.0)
        out.append((f, y, at))
    return out


def test_the_estimate_for_a_given_lambda_is_ppi_pys() -> None:
    for f, y, at in _cases(1, 200):
        for lam in (0.0, 0.37, 1.0):
            ours = ppi_mean(f, y, at, lam=lam)
            reference = float(ppi_py.ppi_mean_pointestimate(y, f[at], f, lam=lam)[0])
            low, high = ppi_py.ppi_mean_ci(y, f[at], f, alpha=0.05, lam=lam)
            if ours.estimate is None:
                assert ours.reason is not None and "zero width" in ours.reason
                continue
            assert ours.lam == lam
            assert _close(ours.estimate, reference)
            assert _close(ours.estimate, float(low[0] + high[0]) / 2)  # ppi_mean_ci's centre


def test_with_ppi_pys_variance_and_normal_quantile_the_interval_is_ppi_pys() -> None:
    switched = Method("slope", "ppi_py", "normal")
    checked = 0
    for f, y, at in _cases(2, 200):
        for lam in (0.0, 0.5, 0.9, None):
            ours = ppi_mean(f, y, at, lam=lam, method=switched)
            if ours.ci is None or ours.lam is None:
                continue
            low, high = ppi_py.ppi_mean_ci(y, f[at], f, alpha=0.05, lam=ours.lam)
            assert _close(ours.ci[0], float(low[0])) and _close(ours.ci[1], float(high[0]))
            checked += 1
    assert checked > 700


def test_the_product_interval_written_out() -> None:
    f = np.array([0.2, 0.5, 0.1, 0.9, 0.4, 0.6, 0.3, 0.8, 0.0, 0.7])
    at = np.array([1, 3, 4, 6, 8])
    y = np.array([0.35, 0.6, 0.55, 0.2, 0.1])
    fa = f[at]
    slope = float(np.cov(fa, y)[0, 1] / fa.var(ddof=1))
    assert 0 < slope < 1  # unclipped: the cross term is 0
    residual = y - slope * fa
    estimate = slope * f.mean() + residual.mean()
    var = slope**2 * f.var(ddof=1) / 10 + residual.var(ddof=1) / 5
    half = float(t_dist.ppf(0.975, 4)) * math.sqrt(var)
    result = ppi_mean(f, y, at)
    assert result.lam == pytest.approx(slope, abs=1e-14)
    assert result.estimate == pytest.approx(estimate, abs=1e-14)
    assert result.ci == pytest.approx((estimate - half, estimate + half), abs=1e-9)
    assert (result.audited, result.of) == (5, 10)


def test_a_clipped_lambda_keeps_the_cross_term() -> None:
    f = np.linspace(0.0, 1.0, 30)
    at = np.arange(0, 30, 3)
    y = 3.0 * f[at] + np.array([0.1, -0.1] * 5)  # slope about 3: lambda clipped to 1
    result = ppi_mean(f, y, at)
    assert result.lam == 1.0 and result.ci is not None
    residual = y - f[at]
    cross = 2.0 * float(np.cov(f[at], residual)[0, 1])
    assert cross > 0
    var = f.var(ddof=1) / 30 + residual.var(ddof=1) / 10 + cross / 30
    half = float(t_dist.ppf(0.975, 9)) * math.sqrt(var)
    assert result.ci == pytest.approx((result.estimate - half, result.estimate + half), abs=1e-9)
    without = float(t_dist.ppf(0.975, 9)) * math.sqrt(var - cross / 30)
    assert result.ci[1] - result.ci[0] > 2 * without  # the cross term widens it
    against = ppi_mean(f, 1.0 - f[at], at)  # a judge that moves against the humans
    assert against.lam == 0.0 and against.estimate == pytest.approx(float((1.0 - f[at]).mean()))


def test_a_judge_constant_on_the_audit_gives_the_audit_alone() -> None:
    f = np.array([0.5, 0.1, 0.5, 0.9, 0.5, 0.3])
    at = np.array([0, 2, 4])
    y = np.array([0.2, 0.6, 0.4])
    result = ppi_mean(f, y, at)
    assert result.lam == 0.0 and result.estimate == pytest.approx(0.4)
    half = float(t_dist.ppf(0.975, 2)) * math.sqrt(y.var(ddof=1) / 3)
    assert result.ci == pytest.approx((0.4 - half, 0.4 + half), abs=1e-9)


def test_differences_are_the_mean_of_the_differences() -> None:
    rng = np.random.default_rng(5)
    base, cand = rng.uniform(0, 1, 40), rng.uniform(0, 1, 40)
    at = np.sort(rng.choice(40, 12, replace=False))
    bh, ch = base[at] + rng.normal(0, 0.1, 12), cand[at] + rng.normal(0, 0.1, 12)
    assert ppi_mean_difference(cand, base, ch, bh, at) == ppi_mean(cand - base, ch - bh, at)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 14, 19, 42, 100, 1000])
def test_t_quantiles_match_scipy(df: int) -> None:
    for p in (0.51, 0.6, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.025, 0.2):
        assert t_quantile(p, df) == pytest.approx(float(t_dist.ppf(p, df)), rel=1e-10, abs=1e-12)
    for x in (-8.0, -1.5, -0.01, 0.0, 0.3, 2.0, 25.0):
        assert t_cdf(x, df) == pytest.approx(float(t_dist.cdf(x, df)), abs=1e-12)


def test_the_product_covers_a_population_mean_where_ppi_pys_falls_short() -> None:
    # bench/bench_ppi_superpopulation.py's toy, smaller: per query Y ~ N(0, 1), the judge's
    # f = Y + 0.2 + 0.3 N(0, 1); 43 queries drawn afresh each time, 10 audited; truth 0.
    rng = np.random.default_rng(2024)
    reps, covered = 3000, {"product": 0, "ppi_py": 0}
    for _ in range(reps):
        y_all = rng.normal(size=43)
        f = y_all + 0.2 + 0.3 * rng.normal(size=43)
        at = np.sort(rng.choice(43, 10, replace=False))
        for name, method in (("product", PRODUCT), ("ppi_py", PPI_PY)):
            ci = ppi_mean(f, y_all[at], at, method=method).ci
            assert ci is not None
            covered[name] += int(ci[0] <= 0.0 <= ci[1])
    assert covered["product"] / reps >= 0.935, covered
    assert covered["ppi_py"] / reps <= 0.92, covered  # what made the product choose its own


def test_the_forecast_uses_the_products_interval() -> None:
    rng = np.random.default_rng(12)
    f = rng.uniform(0.0, 1.0, 300)
    at = np.sort(rng.choice(300, 20, replace=False))
    y = np.clip(1.4 * f[at] + rng.normal(0.0, 0.05, 20), 0, 1.4)  # slope above 1: clipped
    forecast = audit_size_for_width(0.14, f, y, at)
    assert forecast.queries is not None, forecast
    residual = y - f[at]
    fixed = (f.var(ddof=1) + 2 * float(np.cov(f[at], residual)[0, 1])) / 300

    def width(n: int) -> float:
        return 2 * float(t_dist.ppf(0.975, n - 1)) * math.sqrt(fixed + residual.var(ddof=1) / n)

    assert width(forecast.queries) <= 0.14 < width(forecast.queries - 1)
    assert "lambda 1.000" in forecast.basis
    alone = audit_size_for_width(0.14, f)
    assert alone.queries is not None and alone.queries > forecast.queries
