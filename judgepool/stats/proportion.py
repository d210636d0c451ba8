"""The Wilson score interval of a proportion: how sure a canary rate of k in n can be.

A canary kind's false-positive rate rests on a dozen answers or so; a point rate of 2 in 6
(33 %) is far from knowing that the judge is fooled more than 10 % of the time. Wilson's
interval (Wilson 1927) inverts the normal test of the proportion, so it stays inside [0, 1] and
keeps close to its nominal coverage for small n and rates near 0 or 1, where the Wald interval
(p +- z sqrt(p(1-p)/n)) collapses to a point:

    centre = (k + z^2/2) / (n + z^2),   half = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)

tests/test_canary_rates.py checks it against statsmodels' `proportion_confint(method="wilson")`.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Wilson score interval at `level` of `successes` in `trials` (> 0)."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes in {trials} trials is not a proportion")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    z2 = z * z
    centre = (successes + z2 / 2) / (trials + z2)
    half = z / (trials + z2) * math.sqrt(successes * (trials - successes) / trials + z2 / 4)
    return max(0.0, centre - half), min(1.0, centre + half)
