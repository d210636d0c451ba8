"""How many audited queries a judge-corrected interval needs to reach a width (before or during
an audit), from the variances observed so far (metrics/ppi.py has the interval itself).

The interval's half-width with n audited queries is q(n) * sqrt(A / N + s_r^2 / n), with
A = lam^2 s_f^2 (+ 2 lam cov(f, r) for the nested design) and q(n) the method's quantile (t(n - 1)
or z). It shrinks as n grows, so the smallest n that reaches the width is found by bisection.
With 2 or more audited queries, lam, s_r^2 and the covariance are the observed ones (divisor - 1).
With none (or 1) the forecast is for the audit alone (lam = 0) with the judge values' variance
standing in for the human values': an upper estimate, since a judge that tracks the humans
needs fewer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from judgepool.errors import UsageError
from judgepool.metrics.ppi import (
    ALPHA,
    PRODUCT,
    Method,
    check_alpha,
    choose_lambda,
    finite,
    positions,
    quantile,
)

#: A forecast past this many audited queries is reported as out of reach.
_MOST = 10_000_000


def _smallest(wide: Callable[[int], float], width: float) -> int:
    """The smallest n >= 2 with wide(n) <= width (wide decreases in n); _MOST + 1 if none."""
    if wide(2) <= width:
        return 2
    low, high = 2, 4  # wide(low) > width throughout
    while wide(high) > width:
        if high >= _MOST:
            return _MOST + 1
        low, high = high, min(high * 2, _MOST)
    while high - low > 1:
        middle = (low + high) // 2
        if wide(middle) <= width:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class AuditSize:
    """How many audited queries would give an interval no wider than `width`, or why not known."""

    queries: int | None
    width: float
    basis: str  # which variances the forecast rests on
    reason: str | None = None


def audit_size_for_width(
    width: float,
    judge: ArrayLike,
    human: ArrayLike = (),
    audited: ArrayLike = (),
    *,
    alpha: float = ALPHA,
    method: Method = PRODUCT,
) -> AuditSize:
    """Forecast the audited queries that would bring the interval of `method` down to `width`."""
    alpha = check_alpha(alpha)
    if not (math.isfinite(width) and width > 0.0):
        raise UsageError(f"interval width {width} is not positive", "give e.g. 0.05")
    f = finite("judge values", judge)
    size = f.size
    at = positions(audited, size)
    y = finite("human values", human)
    if y.size != at.size:
        raise UsageError(
            f"{y.size} human values for {at.size} audited queries",
            "give one human value per audited query, in the order of the audited positions",
        )
    if size < 2:
        return AuditSize(None, width, "none", f"{size} queries: too few to estimate a variance")
    judge_var = float(f.var(ddof=1))
    cross = 0.0
    if at.size >= 2:
        weight = choose_lambda(method, y, f[at], f)
        residual = y - weight * f[at]
        residual_var = float(residual.var(ddof=1))
        if method.variance == "nested" and weight != 0.0:
            cross = 2.0 * weight * float(np.cov(f[at], residual, ddof=1)[0, 1])
        basis = f"observed on {at.size} audited queries (lambda {weight:.3f})"
    else:
        weight, residual_var = 0.0, judge_var
        basis = "no audit yet: the audit alone, with the judge values' variance for the humans'"
    if residual_var == 0.0:
        return AuditSize(None, width, basis, "no variance observed: nothing to base a forecast on")
    fixed = max(0.0, weight**2 * judge_var + cross) / size
    limit = NormalDist().inv_cdf(1.0 - alpha / 2.0)  # q(n) as n grows without end

    def wide(n: int) -> float:
        return 2.0 * quantile(method, alpha, n) * math.sqrt(fixed + residual_var / n)

    if 2.0 * limit * math.sqrt(fixed) >= width:
        return AuditSize(
            None,
            width,
            basis,
            f"an interval of width {width:g} is narrower than {size} queries allow: the judge "
            "values' own spread already makes it wider; add queries to the evaluation set",
        )
    needed = _smallest(wide, width)
    if needed >= size:
        about = f"about {needed}" if needed <= _MOST else f"more than {_MOST:,}"
        return AuditSize(
            None,
            width,
            basis,
            f"would need {about} audited queries, not fewer than the {size} there are: "
            "audit them all (then the human labels are the answer) or accept a wider interval",
        )
    return AuditSize(needed, width, basis)
