"""Student's t quantiles without scipy (the judge-corrected interval's t(n - 1) quantile).

The distribution function of t with `df` degrees of freedom is, for t >= 0,
    F(t) = 1/2 + I_y(1 / 2, df / 2) / 2,   y = t^2 / (df + t^2),
with I_y(a, b) the regularised incomplete beta function, evaluated here by its continued fraction
(modified Lentz iteration), on the side of x where the fraction converges fast. The quantile is
found by bisection on F, which is monotone; 200 halvings of a bracket reach the float's
resolution. tests/test_ppi.py checks the quantiles against scipy.stats.t.ppf (to 1e-10 for the
degrees of freedom an audit has, up to 1,000; the log-gamma terms limit it to about 1e-9 beyond
10^6, where the normal quantile is used past 10^7).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from judgepool.errors import UsageError

_TINY = 1e-300
_EPS = 1e-15


def _fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (converges fast for x < (a + 1) / (a + b + 2))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, 10_000):
        # Even step, then odd step of the fraction's terms.
        for term in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + term * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + term / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1.0) < _EPS:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _fraction(a, b, x) / a
    return 1.0 - front * _fraction(b, a, 1.0 - x) / b


def _central(t: float, df: float) -> float:
    """P(0 < T < |t|) = I_y(1/2, df/2) / 2 with y = t^2 / (df + t^2): no cancellation near 0."""
    square = t * t
    return 0.5 * incomplete_beta(0.5, df / 2.0, square / (df + square))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    central = _central(t, df)
    return 0.5 + central if t >= 0 else 0.5 - central


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with `df` > 0 degrees of freedom (0 < p < 1)."""
    if not 0.0 < p < 1.0:
        raise UsageError(f"quantile level {p} is not between 0 and 1", "use e.g. 0.975")
    if not df > 0.0:
        raise UsageError(f"{df} degrees of freedom", "a t quantile needs df > 0 (2+ queries)")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df > 1e7:  # indistinguishable from the normal at float precision
        return NormalDist().inv_cdf(p)
    target = p - 0.5
    low, high = 0.0, max(1.0, NormalDist().inv_cdf(p))
    while _central(high, df) < target:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if _central(middle, df) < target:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)
