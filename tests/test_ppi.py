"""metrics.ppi's PPI_PY method against the reference PPI++ (ppi_py's ppi_mean_ci), its edge cases,
the verdict and the audit-size forecast (tests/test_ppi_product.py: the product's method).

The reference is the PyPI package `ppi-python` (a test dependency): the same per-query inputs must
give the same estimate, lambda and interval to 1e-9, mean and paired-difference cases alike.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import ppi_py
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from ppi_py.ppi import _calc_lam_glm

from judgepool.errors import UsageError
from judgepool.metrics.ppi import (
    PPI_PY,
    PPIEstimate,
    ppi_mean,
    ppi_mean_difference,
)
from judgepool.metrics.ppi_size import AuditSize, audit_size_for_width

TOL = 1e-9


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


def _reference(
    f: NDArray[np.float64], y: NDArray[np.float64], at: NDArray[np.int64], alpha: float = 0.05
) -> tuple[float, float, float, float]:
    """ppi_py's estimate, lambda and interval for the same inputs (Yhat_unlabeled = all N)."""
    fa = f[at]
    low, high = ppi_py.ppi_mean_ci(y, fa, f, alpha=alpha)
    estimate = ppi_py.ppi_mean_pointestimate(y, fa, f)
    # The lambda ppi_mean_ci computes (lam=None): its gradients are the values minus the PPI
    # point estimate, which the centring in _calc_lam_glm removes.
    centre = float(ppi_py.ppi_mean_pointestimate(y, fa, f, lam=1)[0])
    lam = _calc_lam_glm(y - centre, fa - centre, f - centre, np.eye(1), clip=True)
    return float(estimate[0]), float(lam), float(low[0]), float(high[0])


def _assert_matches(result: PPIEstimate, reference: tuple[float, float, float, float]) -> None:
    estimate, lam, low, high = reference
    if high - low <= 1e-11:  # the reference's interval has no width (or rounding's)
        assert result.reason is not None and "zero width" in result.reason, result
        return
    assert result.estimate is not None and result.ci is not None and result.lam is not None
    assert _close(result.estimate, estimate), (result.estimate, estimate)
    assert _close(result.lam, lam), (result.lam, lam)
    assert _close(result.ci[0], low), (result.ci, (low, high))
    assert _close(result.ci[1], high), (result.ci, (low, high))


def _case(
    rng: np.random.Generator, kind: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Judge values for N queries, human values for a uniform random audited subset."""
    size = int(rng.integers(3, 120))
    n = int(rng.integers(2, size))
    at = np.sort(rng.choice(size, n, replace=False))
    if kind == "continuous":
        f = rng.normal(size=size) * rng.uniform(0.01, 5.0) + rng.normal()
        y = f[at] * rng.uniform(-0.5, 2.0) + rng.normal(size=n) * rng.uniform(0.0, 3.0)
    else:  # measure-like: values in [0, 1] on a grid (ties), the human ones a perturbation
        f = np.round(rng.uniform(0.0, 1.0, size) * 10) / 10
        y = np.clip(f[at] + np.round(rng.normal(size=n) * 2) / 10, 0.0, 1.0)
    return f, y, at


@pytest.mark.parametrize("kind", ["continuous", "grid"])
def test_matches_ppi_py_on_seeded_cases(kind: str) -> None:
    rng = np.random.default_rng(20_231_102)
    checked = 0
    for _ in range(400):
        f, y, at = _case(rng, kind)
        if np.ptp(f) == 0.0:  # the reference's lambda is 0/0 there (tested apart below)
            continue
        result = ppi_mean(f, y, at, method=PPI_PY)
        _assert_matches(result, _reference(f, y, at))
        checked += result.ci is not None
    assert checked > 350


def test_paired_difference_matches_ppi_py_on_the_differences() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        size = int(rng.integers(5, 80))
        n = int(rng.integers(2, size))
        at = np.sort(rng.choice(size, n, replace=False))
        base = rng.uniform(0.0, 1.0, size)
        cand = np.clip(base + rng.normal(0.1, 0.2, size), 0.0, 1.0)
        base_h = np.clip(base[at] + rng.normal(0.0, 0.15, n), 0.0, 1.0)
        cand_h = np.clip(cand[at] + rng.normal(-0.05, 0.15, n), 0.0, 1.0)
        result = ppi_mean_difference(cand, base, cand_h, base_h, at, method=PPI_PY)
        _assert_matches(result, _reference(cand - base, cand_h - base_h, at))
        mask = np.zeros(size, dtype=bool)
        mask[at] = True
        assert ppi_mean_difference(cand, base, cand_h, base_h, mask, method=PPI_PY) == result


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    size=st.integers(3, 60),
    alpha=st.sampled_from([0.05, 0.1, 0.01, 0.2]),
)
def test_matches_ppi_py_property(data: st.DataObject, size: int, alpha: float) -> None:
    values = st.integers(-1000, 1000).map(lambda v: v / 1000)  # measure-like: a grid, ties
    f = np.array(data.draw(st.lists(values, min_size=size, max_size=size)))
    n = data.draw(st.integers(2, size - 1))
    at = np.array(sorted(data.draw(st.permutations(range(size)))[:n]), dtype=np.int64)
    y = np.array(data.draw(st.lists(values, min_size=n, max_size=n)))
    assume(np.ptp(f) > 0.0)  # a constant judge: the reference's lambda is 0/0 (tested apart)
    result = ppi_mean(f, y, at, alpha=alpha, method=PPI_PY)
    _assert_matches(result, _reference(f, y, at, alpha))
    assert result.alpha == alpha and result.audited == n and result.of == size


def test_fixed_lambda_matches_ppi_py() -> None:
    rng = np.random.default_rng(3)
    f, y, at = _case(rng, "continuous")
    for lam in (0.0, 0.3, 1.0):
        low, high = ppi_py.ppi_mean_ci(y, f[at], f, alpha=0.05, lam=lam)
        result = ppi_mean(f, y, at, lam=lam, method=PPI_PY)
        assert result.ci is not None and result.lam == lam
        assert _close(result.ci[0], float(low[0])) and _close(result.ci[1], float(high[0]))


def test_the_ppi_py_interval_is_the_normal_one_written_out() -> None:
    f = np.array([0.2, 0.5, 0.1, 0.9, 0.4, 0.6, 0.3])
    at = np.array([1, 3, 4])
    y = np.array([0.4, 0.7, 0.5])
    fa = f[at]
    cov = float(np.mean((y - y.mean()) * (fa - fa.mean())))
    lam = cov / ((1 + 3 / 7) * float(np.concatenate([fa, f]).var(ddof=1)))
    assert 0 < lam < 1
    estimate = lam * f.mean() + (y - lam * fa).mean()
    se = math.sqrt(lam**2 * f.var() / 7 + (y - lam * fa).var() / 3)
    half = NormalDist().inv_cdf(0.975) * se
    result = ppi_mean(f, y, at, method=PPI_PY)
    assert result.lam == pytest.approx(lam, abs=1e-15)
    assert result.estimate == pytest.approx(estimate, abs=1e-15)
    assert result.ci == pytest.approx((estimate - half, estimate + half), abs=1e-15)
    assert result.to_json() == {
        "estimate": result.estimate,
        "ci95": [result.ci[0], result.ci[1]],  # type: ignore[index]
        "audited": 3,
        "of": 7,
        "lambda": result.lam,
    }
    assert "ci90" in (ppi_mean(f, y, at, alpha=0.1, method=PPI_PY).to_json() or {})


def test_lambda_is_clipped_to_0_and_1() -> None:
    f = np.linspace(0.0, 1.0, 20)
    at = np.arange(0, 20, 4)
    against = ppi_mean(f, 1.0 - f[at], at, method=PPI_PY)  # negative covariance
    amplified = ppi_mean(f, 5.0 * f[at], at, method=PPI_PY)  # slope 5: lambda above 1
    assert against.lam == 0.0 and amplified.lam == 1.0
    _assert_matches(against, _reference(f, 1.0 - f[at], at))
    _assert_matches(amplified, _reference(f, 5.0 * f[at], at))


def test_edge_cases_give_a_reason_not_a_number() -> None:
    f = np.array([0.1, 0.4, 0.3, 0.8])
    cases = {
        "no audited query yet": ppi_mean(f, [], np.zeros(4, dtype=bool)),
        "needs at least 2": ppi_mean(f, [0.5], [2]),
        "all 4 queries are audited": ppi_mean(f, [0.1, 0.5, 0.3, 0.7], [0, 1, 2, 3]),
        "zero width": ppi_mean(np.full(4, 0.5), [0.2, 0.2], [0, 3]),
        "has no query": ppi_mean([], [], []),
    }
    for words, result in cases.items():
        assert result.reason is not None and words in result.reason, result
        assert result.estimate is None and result.ci is None and result.lam is None
        assert result.to_json() is None
    assert cases["needs at least 2"].audited == 1 and cases["needs at least 2"].of == 4


def test_constant_judge_values_give_the_audit_alone() -> None:
    f = np.full(10, 0.25)
    at = np.array([0, 4, 7])
    y = np.array([0.1, 0.6, 0.3])
    result = ppi_mean(f, y, at, method=PPI_PY)
    # The reference's lambda is 0/0 (NaN) here; every lambda gives this same interval.
    low, high = ppi_py.ppi_mean_ci(y, f[at], f, alpha=0.05, lam=0.0)
    assert result.lam == 0.0 and result.estimate == pytest.approx(y.mean(), abs=1e-15)
    assert result.ci == pytest.approx((float(low[0]), float(high[0])), abs=TOL)
    assert ppi_mean(f, y, at, lam=1.0, method=PPI_PY).ci == pytest.approx(result.ci, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: ppi_mean([0.1, np.nan, 0.3], [0.2, 0.1], [0, 2]), "not a number"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2, np.inf], [0, 2]), "not a number"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2], [0, 2]), "1 human values for 2"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2, 0.3], [0, 0]), "listed twice"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2, 0.3], [0, 3]), "must lie in 0..2"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2], [True, False]), "mask of shape"),
        (lambda: ppi_mean([[0.1, 0.2]], [0.2], [0]), "one value per query"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2, 0.3], [0, 1], alpha=1.5), "alpha"),
        (lambda: ppi_mean([0.1, 0.2, 0.3], [0.2, 0.3], [0, 1], lam=math.nan), "lam"),
        (
            lambda: ppi_mean_difference([0.1, 0.2], [0.1, 0.2, 0.3], [0.1], [0.2], [0]),
            "differ in length",
        ),
    ],
)
def test_bad_inputs_are_refused(call: object, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        call()  # type: ignore[operator]


def _width_at(n: int, lam: float, judge_var: float, residual_var: float, size: int) -> float:
    return 2 * NormalDist().inv_cdf(0.975) * math.sqrt(lam**2 * judge_var / size + residual_var / n)


def test_audit_size_with_no_audit_is_the_audit_alone() -> None:
    rng = np.random.default_rng(11)
    f = rng.uniform(-0.3, 0.5, 200)
    forecast = audit_size_for_width(0.1, f, method=PPI_PY)
    assert isinstance(forecast, AuditSize) and forecast.reason is None
    assert forecast.queries is not None and "no audit yet" in forecast.basis
    var = float(f.var(ddof=1))
    assert _width_at(forecast.queries, 0.0, var, var, 200) <= 0.1
    assert _width_at(forecast.queries - 1, 0.0, var, var, 200) > 0.1


def test_audit_size_from_an_audit_uses_the_observed_variances() -> None:
    rng = np.random.default_rng(12)
    f = rng.uniform(0.0, 1.0, 300)
    at = np.sort(rng.choice(300, 20, replace=False))
    y = f[at] + rng.normal(0.05, 0.05, 20)
    forecast = audit_size_for_width(0.08, f, y, at, method=PPI_PY)
    assert forecast.queries is not None, forecast
    estimate = ppi_mean(f, y, at, method=PPI_PY)
    assert estimate.lam is not None and f"lambda {estimate.lam:.3f}" in forecast.basis
    judge_var = float(f.var(ddof=1))
    residual_var = float((y - estimate.lam * f[at]).var(ddof=1))
    width = _width_at(forecast.queries, estimate.lam, judge_var, residual_var, 300)
    assert (
        width <= 0.08 < _width_at(forecast.queries - 1, estimate.lam, judge_var, residual_var, 300)
    )
    # A good judge needs fewer audited queries than the audit alone would.
    alone = audit_size_for_width(0.08, f, method=PPI_PY)
    assert alone.queries is not None and forecast.queries < alone.queries


def test_audit_size_says_when_a_width_is_out_of_reach() -> None:
    rng = np.random.default_rng(13)
    f = rng.uniform(0.0, 1.0, 40)
    at = np.arange(0, 40, 4)
    y = f[at] + rng.normal(0.0, 0.01, at.size)
    too_narrow = audit_size_for_width(0.01, f, y, at, method=PPI_PY)
    assert too_narrow.queries is None and too_narrow.reason is not None
    assert "narrower than 40 queries allow" in too_narrow.reason
    too_many = audit_size_for_width(0.05, f, method=PPI_PY)
    assert too_many.queries is None and too_many.reason is not None
    assert "audit them all" in too_many.reason
    flat = audit_size_for_width(0.1, np.full(5, 0.3))
    assert flat.queries is None and "no variance" in (flat.reason or "")
    with pytest.raises(UsageError, match="not positive"):
        audit_size_for_width(0.0, f)
