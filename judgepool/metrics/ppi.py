"""Judge-corrected means over queries: prediction-powered inference (PPI++) with an audited sample.

The query is the unit. For each of the N queries of the evaluation set, `f_i` is the per-query
value (a measure, or a paired difference candidate - baseline) computed with the judge's labels
among the effective labels. For the n audited queries, `Y_j` is the same value with the audited
human labels in place of the judge's. PPI++ (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient
Prediction-Powered Inference", arXiv 2311.01453) estimates the mean of Y over the queries:

    estimate = lam * mean_N(f) + mean_n(Y - lam * f)

The second term is the rectifier: the judge's average error on the audited queries, subtracted
from the judge's mean. For a fixed lam the estimate is unbiased whatever the judge's errors, as
long as the audited queries are a uniform random subset of the N (`judgepool audit sample` draws
them so). lam = 0 is the audit alone (the classical mean of Y), lam = 1 the original PPI.

Two methods (`Method`), which differ in lam, the variance and the quantile:

`PRODUCT` (what judgepool reports). The audited queries are among the N (a nested design), so
with a = Y - lam * f the estimate's variance, for queries drawn from a population, is

    var = lam^2 s_f^2 / N + s_a^2 / n + 2 lam cov(f, a) / N

(the cross term: the audited queries' f is part of mean_N(f)). Written in Y it is
s_Y^2 / n + (1/n - 1/N) (lam^2 s_f^2 - 2 lam cov(f, Y)), smallest at the regression slope
lam = cov(f, Y) / var(f), where cov(f, a) = 0. So lam is the slope on the audited queries,
clipped to [0, 1] (a judge that moves against the humans gets no weight, and no more than full
weight), and the variance keeps the cross term, so a clipped lam is still counted honestly (the
term is 0 at the slope itself and positive where the clip binds). s_f^2 is over the N queries,
s_a^2 and cov(f, a) over the n audited ones, all with divisor - 1; the interval is
estimate -+ t_{n-1, 1-alpha/2} * sqrt(var).

`PPI_PY` (the reference, kept exact). The normal interval of `ppi_py.ppi_mean_ci(Y, Yhat,
Yhat_unlabeled, alpha, lam=None)` with Yhat = the audited queries' f and Yhat_unlabeled = all N
queries' f (the audited ones included): lam = cov_n(Y, f) / ((1 + n / N) * var_{n+N}(f)),
clipped to [0, 1] (cov with divisor n; var over the audited values followed by all N, divisor
n + N - 1), and estimate -+ z_{1-alpha/2} * sqrt(lam^2 var_N(f) / N + var_n(Y - lam f) / n)
(divisors N and n). tests/test_ppi.py checks estimate, lam and interval against `ppi_py` to 1e-9,
and that the product's estimate for a given lam is ppi_py's, its interval too once its variance
and quantile are switched to ppi_py's. The code here is ours; only the mathematics is shared.

Why the product does not use ppi_py's: ppi_py's variance treats the audited and the N queries as
independent samples; with the audited queries among the N it omits 2 lam cov(a, f) / N, which is
positive at PPI++'s lam = slope / (1 + n / N), and its normal quantile and divisor-n variances
run short with 10 audited queries (bench/bench_ppi_superpopulation.py: 86-91 % coverage for a
95 % interval at N = 43, n = 10-20; bench/bench_ppi_coverage.py on DL19: 91.6 % on R(rel=3)@10
with 10 audited queries). README "Can I trust the judge?" has the product's coverage.

Edge cases have no number but a reason (`PPIEstimate.reason`): no audited query, fewer than 2, all
N audited (the human values are the answer), and an interval of zero width (nothing varies). When
the judge's values on the audited queries do not vary, the slope is undefined and lam is 0 (the
audit alone); in the PPI_PY method a judge constant over all queries gives lam 0 too, where the
reference returns NaN (every lam gives the same estimate and interval there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgepool.errors import UsageError
from judgepool.stats.tdist import t_quantile

ALPHA = 0.05
Interval = tuple[float, float]
# A standard error this small against the values' scale is rounding, not information.
_ZERO_SE = 1e-12


def flat(se: float, *values: NDArray[np.float64]) -> bool:
    """Whether `se` is zero up to rounding against the size of `values`: then no interval is
    given, as a zero width is a certainty that a few audited queries cannot give."""
    scale = max(1.0, *(float(np.abs(v).max()) for v in values))
    return se <= _ZERO_SE * scale


def flat_reason(n: int) -> str:
    """What is said instead of an interval when `flat` holds."""
    return (
        f"nothing varies across the {n} audited queries and the judge's values: the "
        "interval would have zero width, a certainty so few queries cannot give"
    )


@dataclass(frozen=True)
class Method:
    """How lam is tuned (when not given), which variance and which quantile (module docstring).

    lam: "slope" = cov(f, Y) / var(f) on the audit, clipped to [0, 1]; "ppi++" = ppi_py's.
    variance: "nested" = with the cross term, divisor - 1; "ppi_py" = ppi_py's (divisors N, n).
    quantile: "t" = t(n - 1); "normal" = z.
    """

    lam: Literal["slope", "ppi++"]
    variance: Literal["nested", "ppi_py"]
    quantile: Literal["t", "normal"]

    def describe(self) -> str:
        """One line for reports."""
        lam = "the regression slope clipped to [0, 1]" if self.lam == "slope" else "PPI++'s"
        variance = (
            "the nested-design variance (audited queries among the N)"
            if self.variance == "nested"
            else "ppi_py's variance"
        )
        quantile = "a t(n - 1) quantile" if self.quantile == "t" else "a normal quantile"
        return f"PPI++ with lambda {lam}, {variance}, {quantile}"


PRODUCT = Method("slope", "nested", "t")
PPI_PY = Method("ppi++", "ppi_py", "normal")


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


def _ci_key(alpha: float) -> str:
    level = 100.0 * (1.0 - alpha)
    return f"ci{level:g}".replace(".", "_")


def check_alpha(alpha: float) -> float:
    """Refuse an alpha outside (0, 1)."""
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha {alpha} is not between 0 and 1", "use e.g. 0.05 for 95%")
    return float(alpha)


def finite(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """One finite value per query, or a refusal that says which is not."""
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


def positions(audited: ArrayLike, size: int) -> NDArray[np.int64]:
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
    found = array.astype(np.int64)
    if found.min() < 0 or found.max() >= size:
        raise UsageError(
            f"audited: positions must lie in 0..{size - 1}",
            "give positions of evaluation-set queries",
        )
    if np.unique(found).size != found.size:
        raise UsageError("audited: a query is listed twice", "list each audited query once")
    return found


def _no_number(n: int, size: int, alpha: float, reason: str) -> PPIEstimate:
    return PPIEstimate(None, None, None, n, size, alpha, reason)


def tuned_lambda(
    human: NDArray[np.float64], judge_audited: NDArray[np.float64], judge: NDArray[np.float64]
) -> float:
    """PPI++'s (ppi_py's) variance-minimising lam for a mean, clipped to [0, 1]; 0 if the judge
    is constant."""
    n, size = human.size, judge.size
    pooled = np.concatenate([judge_audited, judge])
    spread = float(pooled.var(ddof=1))
    if spread == 0.0:  # every lam gives the same estimate and interval
        return 0.0
    cov = float(((human - human.mean()) * (judge_audited - judge_audited.mean())).mean())
    return min(max(cov / ((1.0 + n / size) * spread), 0.0), 1.0)


def slope_lambda(human: NDArray[np.float64], judge_audited: NDArray[np.float64]) -> float:
    """The regression slope cov(f, Y) / var(f) on the audited queries, clipped to [0, 1]; 0 when
    the judge's values there do not vary (the slope is undefined: the audit alone)."""
    spread = float(judge_audited.var(ddof=1))
    if spread == 0.0:
        return 0.0
    cov = float(np.cov(judge_audited, human, ddof=1)[0, 1])
    return min(max(cov / spread, 0.0), 1.0)


def choose_lambda(
    method: Method,
    human: NDArray[np.float64],
    judge_audited: NDArray[np.float64],
    judge: NDArray[np.float64],
) -> float:
    """lam as `method` tunes it."""
    if method.lam == "slope":
        return slope_lambda(human, judge_audited)
    return tuned_lambda(human, judge_audited, judge)


def variance_terms(
    method: Method,
    lam: float,
    human: NDArray[np.float64],
    judge_audited: NDArray[np.float64],
    judge: NDArray[np.float64],
) -> tuple[float, float, float]:
    """(lam^2 s_f^2, s_a^2, 2 lam cov(f, a)): var = first / N + second / n + third / N."""
    residual = human - lam * judge_audited
    if method.variance == "ppi_py":
        return lam**2 * float(judge.var()), float(residual.var()), 0.0
    cross = 0.0
    if lam != 0.0 and human.size >= 2:
        cross = 2.0 * lam * float(np.cov(judge_audited, residual, ddof=1)[0, 1])
    return lam**2 * float(judge.var(ddof=1)), float(residual.var(ddof=1)), cross


def quantile(method: Method, alpha: float, n: int) -> float:
    """z or t(n - 1) at 1 - alpha / 2."""
    if method.quantile == "normal":
        return NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return t_quantile(1.0 - alpha / 2.0, float(n - 1))


def ppi_mean(
    judge: ArrayLike,
    human: ArrayLike,
    audited: ArrayLike,
    *,
    alpha: float = ALPHA,
    lam: float | None = None,
    method: Method = PRODUCT,
) -> PPIEstimate:
    """The PPI++ mean of the human values from all N judge values and n audited human ones.

    `judge`: (N,) per-query values with the judge's labels; `audited`: which of those queries were
    audited (a boolean mask of length N, or positions); `human`: (n,) the audited queries' values
    with human labels, in the order of `audited`. `lam=None` tunes lam as `method` says; a
    number fixes it. `method`: PRODUCT (judgepool's interval) or PPI_PY (the reference's).
    """
    alpha = check_alpha(alpha)
    f = finite("judge values", judge)
    size = f.size
    at = positions(audited, size)
    y = finite("human values", human)
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
    weight = choose_lambda(method, y, fa, f) if lam is None else float(lam)
    estimate = weight * float(f.mean()) + float((y - weight * fa).mean())
    judged, residual, cross = variance_terms(method, weight, y, fa, f)
    se = math.sqrt(max(0.0, (judged + cross) / size + residual / n))
    if flat(se, f, y):
        return _no_number(n, size, alpha, flat_reason(n))
    half = quantile(method, alpha, n) * se
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
    method: Method = PRODUCT,
) -> PPIEstimate:
    """The paired case: PPI++ on the per-query differences candidate - baseline (same math)."""
    c, b = finite("candidate values", candidate), finite("baseline values", baseline)
    ch = finite("candidate human values", candidate_human)
    bh = finite("baseline human values", baseline_human)
    if c.shape != b.shape or ch.shape != bh.shape:
        raise UsageError(
            "candidate and baseline values differ in length", "give both runs the same queries"
        )
    return ppi_mean(c - b, ch - bh, audited, alpha=alpha, lam=lam, method=method)
