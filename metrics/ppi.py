"""Judge-corrected means over queries: prediction-powered inference (PPI++) with an audited sample.

The query is the unit. For each of the N queries of the evaluation set, `f_i` is the per-query
value (a measure, or a paired difference candidate - baseline) computed with the judge's labels
among the effective labels. For the n audited queries, `Y_j` is the same value with the audited
human labels in place of the judge's. PPI++ (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient
Prediction-Powered Inference", arXiv 2311.01453) estimates the mean of Y over the queries:

    estimate = lam * mean_N(f) + mean_n(Y - lam * f)

The second term is the rectifier: the judge's average error on the audited queries, subtracted
from the judge's mean. `lam` (the power-tuning parameter) is chosen to minimise the variance:

    lam = cov_n(Y, f) / ((1 + n / N) * var_{n+N}(f)),   clipped to [0, 1]

with cov_n the covariance over the audited queries (divisor n) and var_{n+N} the variance
(divisor n + N - 1) of the judge's values on the audited queries followed by all N queries, the
audited ones thus counted twice, exactly as the reference implementation computes it.
lam = 0 is the audit alone (the classical mean of Y), lam = 1 the original PPI.

The interval is the normal (CLT) interval of the reference `ppi_py.ppi_mean_ci(Y, Yhat,
Yhat_unlabeled, alpha, lam=None)` with Yhat = the audited queries' f and Yhat_unlabeled = all N
queries' f (the audited ones included):

    estimate -+ z_{1 - alpha/2} * sqrt(lam^2 var_N(f) / N + var_n(Y - lam * f) / n)

(variances with divisor N and n, numpy's default). tests/test_ppi.py checks estimate, lam and
interval against `ppi_py` to 1e-9. The code here is ours; only the mathematics is shared.

The audited sample is treated as a uniform random subset of the N queries (drawn without
replacement; `judgepool audit sample` draws it so). Then, for a fixed lam, the estimate is unbiased
for the mean of Y over the N queries whatever the judge's errors. As an interval for that N-query
mean the interval errs wide, as it also carries the query-sampling term var(f) / N and no
finite-population correction, except that with 10 audited queries its normal quantile and
divisor-n variance can run short on skewed values (bench/bench_ppi_coverage.py, on DL19).
As an interval for a population of queries like these (what the plain bootstrap over queries
speaks for) it is too narrow: the reference's variance treats the audited and the N queries as
independent samples, but the audited ones are among the N, so the variance of the estimate has a
further 2 * lam * cov(Y - lam * f, f) / N, which is 0 at the regression slope lam = cov/var but
positive at PPI++'s lam = slope / (1 + n / N) (bench/bench_ppi_superpopulation.py: about 86-91 %
coverage for 95 % at N = 43, n = 10-20).

Edge cases have no number but a reason (`PPIEstimate.reason`): no audited query, fewer than 2, all
N audited (the human values are the answer), and an interval of zero width (nothing varies). When
every judge value is the same, every lam gives the same estimate and interval (the audit alone):
lam is reported as 0 there, where the reference returns NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgepool.pooling.errors import UsageError

ALPHA = 0.05
Interval = tuple[float, float]
Verdict = Literal["robust", "judge-dependent"]
# A standard error this small against the values' scale is rounding, not information.
_ZERO_SE = 1e-12


@dataclass(frozen=True)
class PPIEstimate:
    """The judge-corrected mean and interval, or the reason there is none (then all are None)."""

    estimate: float | None
    ci: Interval | None
    lam: float | None
    audited: int  # n, the audited queries used
    of: int  # N, the queries of the evaluation set
    alpha: float
    reason: str | None = None

    def to_json(self) -> dict[str, Any] | None:
        """{"estimate", "ci95", "audited", "of", "lambda"} ("ci90" at alpha 0.1 ...) or None."""
        if self.estimate is None or self.ci is None:
            return None
        return {
            "estimate": self.estimate,
            _ci_key(self.alpha): [self.ci[0], self.ci[1]],
            "audited": self.audited,
            "of": self.of,
            "lambda": self.lam,
        }


@dataclass(frozen=True)
class AuditSize:
    """How many audited queries would give an interval no wider than `width`, or why not known."""

    queries: int | None
    width: float
    basis: str  # which variances the forecast rests on
    reason: str | None = None


def _ci_key(alpha: float) -> str:
    level = 100.0 * (1.0 - alpha)
    return f"ci{level:g}".replace(".", "_")


def _check_alpha(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha {alpha} is not between 0 and 1", "use e.g. 0.05 for 95%")
    return float(alpha)


def _finite(name: str, values: ArrayLike) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise UsageError(
            f"{name}: expected one value per query, got shape {array.shape}",
            "pass a flat array with one value per query of the evaluation set",
        )
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise UsageError(
            f"{name}: value {array[bad]} at position {bad} is not a number",
            "give every query a value (a measure undefined on a query needs a stated policy, "
            "e.g. leave the query out of both the judge's and the human values)",
        )
    return array


def _positions(audited: ArrayLike, size: int) -> NDArray[np.int64]:
    """The audited queries as positions into the N judge values (a mask or unique positions)."""
    array = np.asarray(audited)
    if array.dtype == np.bool_:
        if array.shape != (size,):
            raise UsageError(
                f"audited: a mask of shape {array.shape} for {size} queries",
                "give one True/False per query of the judge's values",
            )
        return np.flatnonzero(array).astype(np.int64)
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise UsageError(
            "audited: expected a boolean mask or integer positions of the queries",
            "pass a mask as long as the judge values, or the positions of the audited queries",
        )
    positions = array.astype(np.int64)
    if positions.min() < 0 or positions.max() >= size:
        raise UsageError(
            f"audited: positions must lie in 0..{size - 1}",
            "give positions of evaluation-set queries",
        )
    if np.unique(positions).size != positions.size:
        raise UsageError("audited: a query is listed twice", "list each audited query once")
    return positions


def _no_number(n: int, size: int, alpha: float, reason: str) -> PPIEstimate:
    return PPIEstimate(None, None, None, n, size, alpha, reason)


def tuned_lambda(
    human: NDArray[np.float64], judge_audited: NDArray[np.float64], judge: NDArray[np.float64]
) -> float:
    """PPI++'s variance-minimising lam for a mean, clipped to [0, 1]; 0 if the judge is constant."""
    n, size = human.size, judge.size
    pooled = np.concatenate([judge_audited, judge])
    spread = float(pooled.var(ddof=1))
    if spread == 0.0:  # every lam gives the same estimate and interval
        return 0.0
    cov = float(((human - human.mean()) * (judge_audited - judge_audited.mean())).mean())
    return min(max(cov / ((1.0 + n / size) * spread), 0.0), 1.0)


def ppi_mean(
    judge: ArrayLike,
    human: ArrayLike,
    audited: ArrayLike,
    *,
    alpha: float = ALPHA,
    lam: float | None = None,
) -> PPIEstimate:
    """The PPI++ mean of the human values from all N judge values and n audited human ones.

    `judge`: (N,) per-query values with the judge's labels; `audited`: which of those queries were
    audited (a boolean mask of length N, or positions); `human`: (n,) the audited queries' values
    with human labels, in the order of `audited`. `lam=None` tunes lam (PPI++); a number fixes it.
    """
    alpha = _check_alpha(alpha)
    f = _finite("judge values", judge)
    size = f.size
    at = _positions(audited, size)
    y = _finite("human values", human)
    n = at.size
    if y.size != n:
        raise UsageError(f"{y.size} human values for {n} audited queries", "give one per query")
    if size == 0:
        return _no_number(0, 0, alpha, "the evaluation set has no query")
    if n == 0:
        return _no_number(0, size, alpha, f"no audited query yet (0 of {size})")
    if n < 2:
        return _no_number(
            n, size, alpha, f"only 1 of {size} queries audited: an interval needs at least 2"
        )
    if n == size:
        return _no_number(
            n,
            size,
            alpha,
            f"all {size} queries are audited: the human labels are the answer, there is no "
            "judge value left to correct (use the plain interval on the human labels)",
        )
    if lam is not None and not math.isfinite(lam):
        raise UsageError(f"lam {lam} is not a number", "give a number, or None to tune it")
    fa = f[at]
    weight = tuned_lambda(y, fa, f) if lam is None else float(lam)
    residual = y - weight * fa
    estimate = weight * float(f.mean()) + float(residual.mean())
    se = math.sqrt(weight**2 * float(f.var()) / size + float(residual.var()) / n)
    scale = max(1.0, float(np.abs(f).max()), float(np.abs(y).max()))
    if se <= _ZERO_SE * scale:
        return _no_number(
            n,
            size,
            alpha,
            f"nothing varies across the {n} audited queries and the judge's values: a normal "
            "interval would have zero width, a certainty so few queries cannot give",
        )
    half = NormalDist().inv_cdf(1.0 - alpha / 2.0) * se
    return PPIEstimate(estimate, (estimate - half, estimate + half), weight, n, size, alpha)


def ppi_mean_difference(
    candidate: ArrayLike,
    baseline: ArrayLike,
    candidate_human: ArrayLike,
    baseline_human: ArrayLike,
    audited: ArrayLike,
    *,
    alpha: float = ALPHA,
    lam: float | None = None,
) -> PPIEstimate:
    """The paired case: PPI++ on the per-query differences candidate - baseline (same math)."""
    c, b = _finite("candidate values", candidate), _finite("baseline values", baseline)
    ch = _finite("candidate human values", candidate_human)
    bh = _finite("baseline human values", baseline_human)
    if c.shape != b.shape or ch.shape != bh.shape:
        raise UsageError(
            "candidate and baseline values differ in length", "give both runs the same queries"
        )
    return ppi_mean(c - b, ch - bh, audited, alpha=alpha, lam=lam)


def _side(ci: Interval) -> int:
    """+1 above zero, -1 below, 0 when the interval includes zero (end points included)."""
    low, high = ci
    return 1 if low > 0.0 else -1 if high < 0.0 else 0


def verdict(plain: Interval, corrected: Interval) -> Verdict:
    """Robust when both intervals exclude zero on the same side or both include it."""
    return "robust" if _side(plain) == _side(corrected) else "judge-dependent"


def audit_size_for_width(
    width: float,
    judge: ArrayLike,
    human: ArrayLike = (),
    audited: ArrayLike = (),
    *,
    alpha: float = ALPHA,
) -> AuditSize:
    """Forecast the audited queries that would bring the PPI++ interval down to `width`.

    Solves z^2 (lam^2 s_f^2 / N + s_r^2 / n) <= (width / 2)^2 for n, with s_f^2 the judge values'
    variance over the N queries and s_r^2 that of the residual Y - lam f (both divisor - 1).
    With 2 or more audited queries, lam and s_r^2 are the observed ones. With none (or 1), the
    forecast is for the audit alone (lam = 0) with the judge's variance standing in for the human
    values' variance: an upper estimate, since a judge that tracks the humans needs fewer.
    """
    alpha = _check_alpha(alpha)
    if not (math.isfinite(width) and width > 0.0):
        raise UsageError(f"interval width {width} is not positive", "give e.g. 0.05")
    f = _finite("judge values", judge)
    size = f.size
    at = _positions(audited, size)
    y = _finite("human values", human)
    if y.size != at.size:
        raise UsageError(
            f"{y.size} human values for {at.size} audited queries",
            "give one human value per audited query, in the order of the audited positions",
        )
    if size < 2:
        return AuditSize(None, width, "none", f"{size} queries: too few to estimate a variance")
    judge_var = float(f.var(ddof=1))
    if at.size >= 2:
        weight = tuned_lambda(y, f[at], f)
        residual_var = float((y - weight * f[at]).var(ddof=1))
        basis = f"observed on {at.size} audited queries (lambda {weight:.3f})"
    else:
        weight, residual_var = 0.0, judge_var
        basis = "no audit yet: the audit alone, with the judge values' variance for the humans'"
    if residual_var == 0.0:
        return AuditSize(None, width, basis, "no variance observed: nothing to base a forecast on")
    room = (width / (2.0 * NormalDist().inv_cdf(1.0 - alpha / 2.0))) ** 2
    room -= weight**2 * judge_var / size
    if room <= 0.0:
        return AuditSize(
            None,
            width,
            basis,
            f"an interval of width {width:g} is narrower than {size} queries allow: the judge "
            "values' own spread already makes it wider; add queries to the evaluation set",
        )
    needed = max(2, math.ceil(residual_var / room))
    if needed >= size:
        return AuditSize(
            None,
            width,
            basis,
            f"would need about {needed} audited queries, not fewer than the {size} there are: "
            "audit them all (then the human labels are the answer) or accept a wider interval",
        )
    return AuditSize(needed, width, basis)
