"""Agreement between judges (judge vs judge): on the pairs two judges both labelled, Cohen's kappa
(4-level, binary at grade >= 2, quadratic-weighted), exact agreement and the confusion matrix;
over all of them at once, Krippendorff's alpha (ordinal, the grades' nature; nominal too), with
every pair that at least two of them labelled as a unit.

Each judge's grade of a pair is its latest ok label (purpose `label`) at the level, or, for a
jury run's report, the label it wrote in that run (`since_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from judgepool.defaults import LEVEL
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.labels_by_labeller import latest_label_rows
from judgepool.pooling.store.labels_since import labels_since
from judgepool.stats.agreement import (
    alpha_of_units,
    binary_confusion,
    confusion,
    kappa,
    quadratic_weights,
)

GRADES = 4
RELEVANT = 2
Pair = tuple[str, str]


def _none_if_nan(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


@dataclass(frozen=True)
class PairwiseAgreement:
    """Two judges on the pairs both labelled; confusion rows are `first`, columns `second`."""

    first: str
    second: str
    pairs: int
    exact: float | None
    kappa: float | None
    kappa_binary: float | None
    kappa_quadratic: float | None
    confusion: list[list[int]]


@dataclass(frozen=True)
class JudgesAgreement:
    """Several judges: every two of them, and Krippendorff's alpha over all of them."""

    level: str
    labellers: tuple[str, ...]
    units: int  # pairs labelled by at least two of the judges
    alpha_ordinal: float | None
    alpha_nominal: float | None
    pairwise: tuple[PairwiseAgreement, ...]


def agreement_from_grades(
    grades: dict[str, dict[Pair, int]], level: str = LEVEL
) -> JudgesAgreement:
    """The agreement of the judges in `grades` (labeller -> pair -> grade 0-3; others left out)."""
    names = tuple(grades)
    clean = {n: {p: g for p, g in grades[n].items() if 0 <= g < GRADES} for n in names}
    units = sorted({p for n in names for p in clean[n]})
    table = np.full((len(names), len(units)), np.nan)
    index = {p: i for i, p in enumerate(units)}
    for row, name in enumerate(names):
        for pair, grade in clean[name].items():
            table[row, index[pair]] = grade
    rated = (~np.isnan(table)).sum(axis=0) >= 2 if units else np.zeros(0, dtype=bool)
    table = table[:, rated]
    pairwise = []
    for a, b in combinations(names, 2):
        both = sorted(set(clean[a]) & set(clean[b]))
        matrix = confusion([clean[a][p] for p in both], [clean[b][p] for p in both], GRADES)
        n = int(matrix.sum())
        pairwise.append(
            PairwiseAgreement(
                first=a,
                second=b,
                pairs=n,
                exact=float(np.trace(matrix)) / n if n else None,
                kappa=_none_if_nan(kappa(matrix)),
                kappa_binary=_none_if_nan(kappa(binary_confusion(matrix, RELEVANT))),
                kappa_quadratic=_none_if_nan(kappa(matrix, quadratic_weights(GRADES))),
                confusion=matrix.tolist(),
            )
        )
    empty = table.shape[1] == 0
    return JudgesAgreement(
        level=level,
        labellers=names,
        units=int(table.shape[1]),
        alpha_ordinal=None if empty else _none_if_nan(alpha_of_units(table, 4, "ordinal")),
        alpha_nominal=None if empty else _none_if_nan(alpha_of_units(table, 4, "nominal")),
        pairwise=tuple(pairwise),
    )


def judge_grades(
    store: Store, level: str, labellers: Sequence[str], since_id: int | None = None
) -> dict[str, dict[Pair, int]]:
    """labeller -> pair -> grade: the latest ok label of each (written after `since_id`, when
    given: one run's answers)."""
    if since_id is not None:
        found = labels_since(store, level, labellers, since_id)
        return {
            name: {
                p: int(x.grade) for p, x in rows.items() if x.status == "ok" and x.grade is not None
            }
            for name, rows in found.items()
        }
    grades: dict[str, dict[Pair, int]] = {}
    for name in labellers:
        rows = latest_label_rows(store, level, "judge", name)
        grades[name] = {
            (str(q), str(d)): int(g)
            for q, d, g in zip(rows["qid"], rows["doc_id"], rows["grade"], strict=True)
        }
    return grades


def judges_agreement(
    store: Store, level: str, labellers: Sequence[str], since_id: int | None = None
) -> JudgesAgreement:
    """Judge-vs-judge agreement of `labellers` at `level` (see the module docstring)."""
    return agreement_from_grades(judge_grades(store, level, labellers, since_id), level)
