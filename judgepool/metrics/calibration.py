"""Calibration figures: how a judge's grades compare with people's on pairs both graded.

From the 4 x 4 count matrix C (rows: the human's grade, columns: the judge's; grades 0-3):
- exact agreement: trace(C) / sum(C);
- Cohen's kappa on the four grades, and on the binary decisions grade >= 1, >= 2 and >= 3
  (judgepool.stats.agreement.kappa: (p_o - p_e) / (1 - p_e));
- quadratic-weighted kappa (w_ij = (i - j)^2);
- Krippendorff's alpha, ordinal (judgepool.stats.agreement.krippendorff_alpha on o = C + C^T);
- hit rate per human grade g: C[g, g] / sum(C[g, :]), the judge's share right on that grade;
- leniency P(judge >= 2 | human < 2) against strictness P(judge < 2 | human >= 2).

**Re-weighting.** A calibration sample is stratified by human grade (equal numbers per grade, so
that rare grades are measured too), which over-represents the rare grades against the pool. The
population figures re-weight each row g of C by N_g / m_g, N_g the pool's human-labelled pairs of
grade g and m_g the sampled pairs of grade g the judge graded (an answer that failed to parse is
not in C: the re-weighting takes failures as random within their grade). Every figure above is
then computed from the re-weighted matrix, i.e. as if the whole pool had been re-judged. Hit
rates are within a row, so the re-weighting leaves them unchanged. A grade with pairs in the
pool but none graded in the sample cannot be re-weighted: it is named in `missing_grades` and
left out of the population figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgepool.stats.agreement import coincidences, kappa, krippendorff_alpha, quadratic_weights

GRADES: tuple[int, ...] = (0, 1, 2, 3)
RELEVANT = 2


@dataclass(frozen=True)
class Figures:
    """Agreement figures of one count matrix (None where undefined)."""

    pairs: float  # pairs in the matrix (re-weighted: the pool's pairs it stands for)
    confusion: list[list[float]]  # [human grade][judge grade]
    exact: float | None
    kappa: float | None
    kappa_at_least: dict[int, float | None]  # threshold -> binary kappa (grade >= t)
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    hit_rate: list[float | None]  # per human grade
    lenient_rate: float | None  # P(judge >= 2 | human < 2)
    strict_rate: float | None  # P(judge < 2 | human >= 2)

    def to_json(self) -> dict[str, Any]:
        """Plain data (threshold keys as strings, as JSON has them)."""
        out = asdict(self)
        out["kappa_at_least"] = {str(t): v for t, v in self.kappa_at_least.items()}
        return out


def _defined(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _binary(matrix: NDArray[np.float64], threshold: int) -> NDArray[np.float64]:
    """The 2 x 2 matrix of "below threshold" vs not, in floats (re-weighted counts)."""
    below = np.arange(matrix.shape[0]) < threshold
    return np.array(
        [
            [matrix[below][:, below].sum(), matrix[below][:, ~below].sum()],
            [matrix[~below][:, below].sum(), matrix[~below][:, ~below].sum()],
        ]
    )


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def figures(matrix: NDArray[np.float64] | Sequence[Sequence[float]]) -> Figures:
    """Every figure of the module docstring from one count matrix."""
    c = np.asarray(matrix, dtype=np.float64)
    total = float(c.sum())
    rows = c.sum(axis=1)
    human_no, human_yes = c[:RELEVANT].sum(), c[RELEVANT:].sum()
    return Figures(
        pairs=total,
        confusion=c.tolist(),
        exact=_share(float(np.trace(c)), total),
        kappa=_defined(kappa(c)),
        kappa_at_least={t: _defined(kappa(_binary(c, t))) for t in (1, 2, 3)},
        kappa_quadratic=_defined(kappa(c, quadratic_weights(c.shape[0]))),
        alpha_ordinal=_defined(krippendorff_alpha(coincidences(c), "ordinal")),
        hit_rate=[_share(float(c[g, g]), float(rows[g])) for g in range(c.shape[0])],
        lenient_rate=_share(float(c[:RELEVANT, RELEVANT:].sum()), float(human_no)),
        strict_rate=_share(float(c[RELEVANT:, :RELEVANT].sum()), float(human_yes)),
    )


@dataclass(frozen=True)
class CalibrationFigures:
    """The sample's figures as drawn, and re-weighted to the pool's grade mix."""

    sample: Figures
    population: Figures
    pool_counts: list[int]  # human-labelled pairs in the pool, per grade
    graded_counts: list[int]  # sampled pairs the judge graded, per human grade
    missing_grades: list[int]  # grades in the pool with no graded pair: not re-weighted

    def to_json(self) -> dict[str, Any]:
        return {
            "sample": self.sample.to_json(),
            "population": self.population.to_json(),
            "pool_counts": self.pool_counts,
            "graded_counts": self.graded_counts,
            "missing_grades": self.missing_grades,
        }


def calibration_figures(
    human: Sequence[int] | NDArray[np.int64],
    judge: Sequence[int] | NDArray[np.int64],
    pool_counts: Sequence[int],
) -> CalibrationFigures:
    """The figures of the pairs (human grade, judge grade), each 0-3, drawn stratified by human
    grade from a pool with `pool_counts[g]` human-labelled pairs of grade g."""
    from judgepool.stats.agreement import confusion

    sample = confusion(np.asarray(human), np.asarray(judge), len(GRADES)).astype(np.float64)
    graded = sample.sum(axis=1)
    pool = np.asarray(pool_counts, dtype=np.float64)
    weights = np.divide(pool, graded, out=np.zeros_like(pool), where=graded > 0)
    missing = [g for g in GRADES if pool[g] > 0 and graded[g] == 0]
    return CalibrationFigures(
        sample=figures(sample),
        population=figures(sample * weights[:, None]),
        pool_counts=[int(x) for x in pool],
        graded_counts=[int(x) for x in graded],
        missing_grades=missing,
    )
