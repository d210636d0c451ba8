"""The judge-corrected figure that compare and eval report: PPI++ for a ratio of query means,
under the audit's design, with an interval that stays in the measure's range.

Why a ratio. A measure with a relevance threshold averages only the queries that have a doc at
its threshold (R(rel=3)@10 over the queries with a key doc), and which queries those are depends
on the labels: the judge may call a passage a key doc that the people do not, or miss one. The
truth, with human labels everywhere, is

    theta = sum_i v_i u_i / sum_i v_i

over the N queries of the evaluation set, v_i = 1 when query i has a doc at the threshold under
the human labels and u_i its value there (0 elsewhere). With the trec_eval average (or a measure
without a threshold) v_i = 1 for every query, and theta is a plain mean. The judge's labels give
the same two numbers for every query, a_i and b_i (the judge's view); the audit gives u_j and v_j
on the audited queries. Correcting the sum alone, or keeping the judge's count of queries, is
biased (issue 21: +0.01 to +0.06 and -0.06 on R(rel=3)@10); the ratio estimator corrects both,
each by PPI++ with its own lam:

    theta_hat = A / B,  A = lam_u mean_N(a) + H(u - lam_u a),  B = lam_v mean_N(b) + H(v - lam_v b)

H is the audit's mean: a plain mean for a uniform draw, the Hajek mean sum(x / pi) / sum(1 / pi)
for a draw with inclusion probabilities pi (pooling/audit/samples.py's weighted design), so the
estimate is consistent whatever the judge's errors. lam_u is the (1 / pi-weighted) regression
slope of u on a over the audited queries, clipped to [0, 1], lam_v that of v on b; neither
depends on theta, so there is nothing to iterate. For a plain mean (b = v = 1) and a uniform
draw, A is metrics/ppi.py's PRODUCT estimate exactly (tests/test_ppi_ratio.py).

The variance is the linearised one (the delta method), for queries drawn from a population, as
the plain bootstrap's interval is. theta_hat - theta is, to first order, (mean_N(z_hat) +
H(z - z_hat)) / B with z = u - theta v and the judge's part z_hat = lam_u a - theta lam_v b: a
PPI mean with lam 1, whose nested variance is, with r = z - z_hat on the audited queries,

    var = [s^2(z_hat) / N + (s^2(r) + 2 cov(z_hat, r)) / N + D] / B^2

and D the design's variance of H(r) as an estimate of the N queries' mean residual: (1 / n -
1 / N) s^2(r) for a uniform draw of n (then the whole is metrics/ppi.py's nested variance),
sum_j (1 - pi_j) / pi_j^2 (r_j - H(r))^2 / N^2 for a weighted one (Hajek's linearised variance
under Poisson sampling). Moments over the audit are weighted by 1 / pi with divisor n - 1.

The quantile is Student's t with Welch-Satterthwaite degrees of freedom: the judge's part
(s^2(z_hat) / N) is estimated from N queries, the rest from n. A judge the audit finds
exact (r = 0) leaves only the first, and the interval is as wide as N queries make it rather
than the t(n - 1) width of a sample of n (issue 21: a perfect judge read as a doubtful one); a
judge the audit finds useless leaves the second, and t(n - 1).

Two intervals come out: `ci`, for the population of queries (beside the plain bootstrap), and
`audit_ci`, the design's alone (theta_hat -+ t(n - 1) sqrt(D) / B): what the audit says about
the N queries at hand, whose plain figure the verdict (metrics/trust.py) checks against it. Both
are clipped to the measure's possible range when given (an nDCG mean lies in [0, 1], a
difference in [-1, 1]); `clipped` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgepool.errors import UsageError
from judgepool.metrics.ppi import (
    ALPHA,
    PPIEstimate,
    check_alpha,
    finite,
    flat,
    flat_reason,
    positions,
)
from judgepool.stats.tdist import t_quantile

Interval = tuple[float, float]


@dataclass(frozen=True)
class Parts:
    """The variance's parts (already divided by B^2): `judge` from N queries, `audit` from n,
    `design` the audit design's alone (part of `audit`); `df` Welch-Satterthwaite's."""

    judge: float
    audit: float
    design: float
    df: float


def _weighted(x: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    return float((w * x).sum() / w.sum())


def _moment(x: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    """The 1/pi-weighted covariance of x and y with divisor n - 1 (n the audited queries)."""
    n = x.size
    dx, dy = x - _weighted(x, w), y - _weighted(y, w)
    return _weighted(dx * dy, w) * n / (n - 1)


def _slope(judge: NDArray[np.float64], human: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    """The weighted slope of the human values on the judge's over the audit, clipped to [0, 1];
    1 when either does not vary there. Then the slope says nothing (undefined, or 0 only
    because the audited human values happen to be equal), and the lam that minimises the
    estimated variance would be 0: an interval of zero width from an audit that saw no
    variation. lam = 1 (the judge at face value, the original PPI; unbiased like any fixed lam)
    keeps the judge's spread over the N queries in the interval."""
    spread = _moment(judge, judge, w)
    if spread <= 0.0 or _moment(human, human, w) <= 0.0:
        return 1.0
    return min(max(_moment(judge, human, w) / spread, 0.0), 1.0)


def _sums(
    lam_u: float,
    lam_v: float,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    u: NDArray[np.float64],
    v: NDArray[np.float64],
    at: NDArray[np.int64],
    w: NDArray[np.float64],
) -> tuple[float, float]:
    """The PPI++ estimates of the numerator and the denominator."""
    num = lam_u * float(a.mean()) + _weighted(u - lam_u * a[at], w)
    den = lam_v * float(b.mean()) + _weighted(v - lam_v * b[at], w)
    return num, den


def _parts(
    zhat: NDArray[np.float64],
    z: NDArray[np.float64],
    at: NDArray[np.int64],
    den: float,
    pi: NDArray[np.float64] | None,
    floor: float = 0.0,
) -> Parts:
    """The variance's parts for the linearised z (audited) and z_hat (every query)."""
    size, n = zhat.size, at.size
    w = np.ones(n) if pi is None else 1.0 / pi
    r = z - zhat[at]
    s_r = _moment(r, r, w)
    judge = float(zhat.var(ddof=1)) / size
    cross = 2.0 * _moment(zhat[at], r, w)
    if pi is None:
        design = (1.0 / n - 1.0 / size) * s_r
    else:
        centred = r - _weighted(r, w)
        design = float(((1.0 - pi) / pi**2 * centred**2).sum()) / size**2
    design = max(design, floor)
    audit = max(0.0, (s_r + cross) / size + design)
    scale = den**2
    judge, audit, design = judge / scale, audit / scale, design / scale
    if audit <= 0.0:
        df = float(size - 1)
    elif judge <= 0.0:
        df = float(n - 1)
    else:
        df = (judge + audit) ** 2 / (judge**2 / (size - 1) + audit**2 / (n - 1))
    return Parts(judge, audit, design, df)


def _clip(ci: Interval, bounds: Interval | None) -> tuple[Interval, bool]:
    if bounds is None:
        return ci, False
    low, high = max(ci[0], bounds[0]), min(ci[1], bounds[1])
    return (low, high), (low, high) != ci


@dataclass(frozen=True)
class RatioEstimate:
    """A judge-corrected figure (see the module docstring), or the reason there is none."""

    estimate: PPIEstimate  # estimate, ci (population), lam, audited, of, alpha, reason
    judge: float | None  # the judge's own figure over the same queries: sum(a) / sum(b)
    audit_ci: Interval | None  # the design's interval for the N queries at hand
    df: float | None
    se: float | None
    design_se: float | None
    clipped: bool = False

    @property
    def ci(self) -> Interval | None:
        return self.estimate.ci


def _none(n: int, size: int, alpha: float, reason: str, judge: float | None) -> RatioEstimate:
    return RatioEstimate(
        PPIEstimate(None, None, None, n, size, alpha, reason), judge, None, None, None, None
    )


def corrected_ratio(
    judge_num: ArrayLike,
    judge_den: ArrayLike,
    human_num: ArrayLike,
    human_den: ArrayLike,
    audited: ArrayLike,
    *,
    probabilities: ArrayLike | None = None,
    alpha: float = ALPHA,
    bounds: Interval | None = None,
    quantile: str = "satterthwaite",
    design_floor: float = 0.0,
) -> RatioEstimate:
    """The ratio estimate of sum(v u) / sum(v) from the judge's (a, b) on all N queries and the
    audit's (u, v) on the audited ones (a mask or positions; u, v in their order).

    `probabilities`: each audited query's inclusion probability (a weighted draw), None for a
    uniform draw. `bounds`: the figure's possible range, to clip the intervals to. `quantile`:
    "satterthwaite" (the product) or "t" (t(n - 1), metrics/ppi.py's PRODUCT).
    """
    alpha = check_alpha(alpha)
    a, b = finite("judge values", judge_num), finite("judge counts", judge_den)
    if a.shape != b.shape:
        raise UsageError("judge values and counts differ in length", "give one of each per query")
    size = a.size
    at = positions(audited, size)
    u, v = finite("human values", human_num), finite("human counts", human_den)
    n = at.size
    if u.size != n or v.size != n:
        raise UsageError(f"{u.size} human values for {n} audited queries", "give one per query")
    pi = None
    if probabilities is not None:
        pi = finite("inclusion probabilities", probabilities)
        if pi.size != n or (pi <= 0.0).any() or (pi > 1.0).any():
            raise UsageError(
                "inclusion probabilities: one in (0, 1] per audited query",
                "pass the probabilities the audit sample recorded",
            )
    judge = float(a.sum() / b.sum()) if b.sum() > 0 else None
    if size == 0:
        return _none(0, 0, alpha, "the evaluation set has no query", judge)
    if n == 0:
        return _none(0, size, alpha, f"no audited query yet (0 of {size})", judge)
    if n < 2:
        return _none(
            n, size, alpha, f"only 1 of {size} queries audited: an interval needs at least 2", judge
        )
    if n == size:
        return _none(
            n,
            size,
            alpha,
            f"all {size} queries are audited: the human labels are the answer, there is no "
            "judge value left to correct (use the plain interval on the human labels)",
            judge,
        )
    w = np.ones(n) if pi is None else 1.0 / pi
    lam_u, lam_v = _slope(a[at], u, w), _slope(b[at], v, w)
    num, den = _sums(lam_u, lam_v, a, b, u, v, at, w)
    if den > 0.0 and _moment(u - num / den * v, u - num / den * v, w) <= 0.0:
        # the linearised human values do not vary on the audit (one defined query, say):
        # no slope can be told from it, and the judge at face value keeps its spread
        lam_u = lam_v = 1.0
        num, den = _sums(lam_u, lam_v, a, b, u, v, at, w)
    if den <= 0.0:
        return _none(
            n,
            size,
            alpha,
            "no query has a doc at the measure's threshold, by the judge's labels or the "
            "audit's: the figure is not defined",
            judge,
        )
    theta = num / den
    parts = _parts(lam_u * a - theta * lam_v * b, u - theta * v, at, den, pi, design_floor)
    se = math.sqrt(parts.judge + parts.audit)
    if flat(se, a, u):
        return _none(n, size, alpha, flat_reason(n), judge)
    df = float(n - 1) if quantile == "t" else parts.df
    clipped = False
    if bounds is not None and not bounds[0] <= theta <= bounds[1]:
        theta, clipped = min(max(theta, bounds[0]), bounds[1]), True
    half = t_quantile(1.0 - alpha / 2.0, df) * se
    ci, cut = _clip((theta - half, theta + half), bounds)
    clipped = clipped or cut
    design_se = math.sqrt(parts.design)
    audit_half = t_quantile(1.0 - alpha / 2.0, float(n - 1)) * design_se
    audit_ci, _ = _clip((theta - audit_half, theta + audit_half), bounds)
    return RatioEstimate(
        PPIEstimate(theta, ci, lam_u, n, size, alpha), judge, audit_ci, df, se, design_se, clipped
    )
