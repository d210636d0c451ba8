"""How well a judge agrees with people, on the pairs both have labelled.

For each pair at a level that has an ok human label and an ok judge label (the latest of each;
of one labeller when `judge` is named), the two grades form a 4 x 4 confusion matrix (rows =
human, columns = judge, grades 0-3). From it:

- Cohen's kappa on the four grades: (p_o - p_e) / (1 - p_e), p_o the observed agreement, p_e the
  agreement expected from the two raters' marginals alone;
- Cohen's kappa on relevance, grade >= 2 (the binary decision nR@10 and most reports use);
- quadratic-weighted kappa: 1 - sum(w O) / sum(w E), w_ij = (i - j)^2, so a 0-vs-3 disagreement
  costs nine times a 0-vs-1 one;
- leniency: how often the judge says relevant (>= 2) where the human said not (< 2), as a share
  of the human's not-relevant pairs, and the reverse (strictness), as a share of the human's
  relevant pairs.

A kappa is undefined (None) when p_e = 1, i.e. both raters used one and the same category for
every pair. Pairs whose human grade is outside 0-3 (e.g. a qrels file's -1) are left out and
counted in `excluded`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgepool.defaults import LEVEL
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.labels_by_labeller import paired_grade_rows
from judgepool.stats.agreement import binary_confusion, confusion, kappa, quadratic_weights

GRADES: tuple[int, ...] = (0, 1, 2, 3)
RELEVANT = 2


@dataclass(frozen=True)
class Agreement:
    """Judge-vs-human agreement on the pairs both labelled (see the module docstring)."""

    level: str
    labeller: str | None
    pairs: int
    excluded: int
    confusion: list[list[int]]  # [human grade][judge grade]
    exact: float | None
    kappa: float | None
    kappa_binary: float | None
    kappa_quadratic: float | None
    lenient: int  # judge >= 2, human < 2
    strict: int  # judge < 2, human >= 2
    lenient_rate: float | None  # lenient / pairs the human graded < 2
    strict_rate: float | None  # strict / pairs the human graded >= 2

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return asdict(self)


def _none_if_nan(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def agreement_from(
    human: NDArray[np.int64],
    judge: NDArray[np.int64],
    level: str = LEVEL,
    labeller: str | None = None,
) -> Agreement:
    """Agreement statistics of paired grades (pairs with a grade outside 0-3 are excluded)."""
    h = np.asarray(human, dtype=np.int64)
    j = np.asarray(judge, dtype=np.int64)
    valid = np.isin(h, GRADES) & np.isin(j, GRADES)
    h, j = h[valid], j[valid]
    matrix = confusion(h, j, len(GRADES))
    n = int(matrix.sum())
    lenient = int(((j >= RELEVANT) & (h < RELEVANT)).sum())
    strict = int(((j < RELEVANT) & (h >= RELEVANT)).sum())
    human_no = int((h < RELEVANT).sum())
    human_yes = n - human_no
    return Agreement(
        level=level,
        labeller=labeller,
        pairs=n,
        excluded=int((~valid).sum()),
        confusion=matrix.tolist(),
        exact=float(np.trace(matrix)) / n if n else None,
        kappa=_none_if_nan(kappa(matrix)),
        kappa_binary=_none_if_nan(kappa(binary_confusion(matrix, RELEVANT))),
        kappa_quadratic=_none_if_nan(kappa(matrix, quadratic_weights(len(GRADES)))),
        lenient=lenient,
        strict=strict,
        lenient_rate=lenient / human_no if human_no else None,
        strict_rate=strict / human_yes if human_yes else None,
    )


def paired_grades(
    store: Store, level: str = LEVEL, labeller: str | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(human grades, judge grades) of the pairs with both an ok human and an ok judge label."""
    found = paired_grade_rows(store, level, labeller)
    return (
        np.asarray(found["human"], dtype=np.int64),
        np.asarray(found["judge"], dtype=np.int64),
    )


def agreement(store: Store, level: str = LEVEL, labeller: str | None = None) -> Agreement:
    """Judge-vs-human agreement at `level` (of labeller `judge` when named, else any judge)."""
    human, judged = paired_grades(store, level, labeller)
    return agreement_from(human, judged, level=level, labeller=labeller)
