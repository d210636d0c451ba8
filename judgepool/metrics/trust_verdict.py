"""The verdict on a plain figure once an audit exists: does the audit agree with the judge?

Three words, each a claim the audit must support (metrics/ppi_ratio.py gives the figures):

- **judge-biased**: the audit shows the judge's errors moved the figure: the corrected estimate
  lies outside the plain 95% interval, or the plain estimate lies outside the audit's interval
  for these queries (`audit_ci`, the design's uncertainty alone: a test, at 5%, that the plain
  figure is what human labels on these queries would give). It says by how much: plain minus
  corrected, with the interval the audit gives that shift. Read the corrected interval.
- **robust**: the audit agrees with the judge: not judge-biased, the audit's 99% interval for
  these queries lies inside the plain interval (the judge's error on them is bounded within the
  plain interval's margin), the corrected interval does not contradict the plain conclusion
  (same side of zero, or the plain one includes zero), and at least `MIN_AUDIT` queries are
  audited. The plain interval can be read as it is. If the plain interval misses the truth, the
  audit's interval can lie inside it only by missing the truth too. Why 99% and not 95%: the
  plain figure's error and the audit's are correlated (both grow with the judge's errors on the
  queries left unaudited), so among the draws where the plain interval misses, a 95% interval
  misses more often than 5% of the time (bench/bench_ppi_verdicts.py measures how often
  "robust" is said of a plain miss: README, "Can I trust the judge?").
- **too small to tell**: neither: the audit found no error that moved the figure, but it is too
  small to confirm the plain interval (or fewer than `MIN_AUDIT` queries are audited: with 3
  queries and no error found, errors on the others are not ruled out). `needed` says how many
  audited queries would make the audit's interval fit inside the plain one at the observed
  variances, when that is within the evaluation set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from judgepool.metrics.ppi_ratio import RatioEstimate
from judgepool.stats.tdist import t_quantile

Interval = tuple[float, float]
Word = Literal["robust", "judge-biased", "too small to tell"]
#: Fewer audited queries than this never confirm a judge ("robust"): the audit the tool
#: recommends (`audit sample --queries 10`).
MIN_AUDIT = 10
#: The confidence of the audit's interval that "robust" asks to lie inside the plain one.
ROBUST_LEVEL = 0.99


@dataclass(frozen=True)
class TrustVerdict:
    """One figure's verdict, the shift the audit measured, and what would settle it."""

    word: Word
    shift: float  # plain - corrected: how far the judge's errors moved the figure
    shift_ci: Interval | None  # the audit's interval for that shift (these queries)
    why: str
    needed: int | None = None  # audited queries that would tell (too small to tell)
    of: int = 0  # the evaluation set's queries

    def sentence(self) -> str:
        """The verdict as a report prints it."""
        if self.word == "judge-biased":
            if self.shift_ci is None:
                return f"judge-biased: the judge's errors moved the figure by {self.shift:+.3f}"
            low, high = self.shift_ci
            return (
                f"judge-biased: the judge's errors moved the figure by {self.shift:+.3f} "
                f"[{low:+.3f}, {high:+.3f}]"
            )
        if self.word == "too small to tell":
            tell = ""
            if self.needed is not None and self.needed >= self.of:
                tell = f"; auditing all {self.of} queries would (their labels are then the answer)"
            elif self.needed is not None:
                tell = f"; about {self.needed} audited queries would tell"
            return f"too small to tell: {self.why}{tell}"
        return "robust"


def _side(ci: Interval) -> int:
    low, high = ci
    return 1 if low > 0.0 else -1 if high < 0.0 else 0


def _inside(inner: Interval, outer: Interval) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _bounded(corrected: RatioEstimate) -> Interval:
    """The audit's ROBUST_LEVEL interval for the N queries at hand."""
    est, se = corrected.estimate, corrected.design_se or 0.0
    centre = est.estimate or 0.0
    half = t_quantile(0.5 + ROBUST_LEVEL / 2.0, float(est.audited - 1)) * se
    return (centre - half, centre + half)


def needed_audit(corrected: RatioEstimate, plain_ci: Interval) -> int | None:
    """The audited queries (uniform draw) at which the audit's ROBUST_LEVEL interval, at the
    observed residual spread, fits inside the plain interval around the corrected estimate:
    the evaluation set's size when no smaller audit would (all of it audited, the human labels
    are the answer); None without an estimate or any room."""
    est, se = corrected.estimate, corrected.design_se
    if est.estimate is None or se is None or est.audited < 2:
        return None
    n, size = est.audited, est.of
    room = min(est.estimate - plain_ci[0], plain_ci[1] - est.estimate)
    if room <= 0.0:
        return None
    # design variance (1/n - 1/N) s^2: recover s^2 from the observed one
    spread = se**2 / (1.0 / n - 1.0 / size) if n < size else 0.0
    for m in range(max(n + 1, MIN_AUDIT), size):
        half = t_quantile(0.5 + ROBUST_LEVEL / 2.0, float(m - 1)) * math.sqrt(
            spread * (1.0 / m - 1.0 / size)
        )
        if half <= room:
            return m
    return size


def judge_verdict(
    plain_estimate: float, plain_ci: Interval, corrected: RatioEstimate
) -> TrustVerdict | None:
    """The verdict (module docstring); None without a corrected interval."""
    est = corrected.estimate
    if est.estimate is None or est.ci is None or corrected.audit_ci is None:
        return None
    shift = plain_estimate - est.estimate
    low, high = corrected.audit_ci
    shift_ci = (plain_estimate - high, plain_estimate - low)
    outside = not plain_ci[0] <= est.estimate <= plain_ci[1]
    off = not low <= plain_estimate <= high
    if outside or off:
        why = (
            "the corrected estimate lies outside the plain interval"
            if outside
            else "the plain estimate lies outside the audit's interval for these queries"
        )
        return TrustVerdict("judge-biased", shift, shift_ci, why)
    side_plain, side_corrected = _side(plain_ci), _side(est.ci)
    agrees = side_plain == 0 or side_corrected == side_plain
    if agrees and _inside(_bounded(corrected), plain_ci) and est.audited >= MIN_AUDIT:
        return TrustVerdict("robust", shift, shift_ci, "the audit agrees with the judge")
    if est.audited < MIN_AUDIT:
        why = (
            f"the audit found no error that moved the figure, but {est.audited} audited "
            f"queries cannot rule out errors on the other {est.of - est.audited}"
        )
    elif not agrees:
        why = (
            "the audit found no error that moved the figure, but the corrected interval is too "
            "wide to confirm the plain conclusion"
        )
    else:
        why = (
            "the audit found no error that moved the figure, but cannot yet bound the judge's "
            "error within the plain interval"
        )
    needed = needed_audit(corrected, plain_ci)
    return TrustVerdict("too small to tell", shift, shift_ci, why, needed, est.of)
