"""Per-query values of the measures, for every run and query at once (no loop over queries).

Input: a `TopK` cube (runs x queries x k grades, NaN for a hole or an empty rank) and the
`Labels` counts per query. Output: a (runs, queries) array per measure, NaN where the measure is
not defined for the query (no doc at its threshold); a run that returned nothing for a query
scores 0 there (its cube row is all NaN, so it finds nothing). The tie order is the store's rank,
so these values are trec_eval's:

- nDCG@k  = sum_i gain_i / log2(i + 1) over ranks i <= k, gain = grade if grade > 0 else 0,
            divided by the same sum over the query's labelled grades sorted descending. Grades
            <= 0 (negative ones included) add nothing and are not in the ideal, as in trec_eval,
            which treats a negative grade as "in the pool, not judged".
- R(rel=t)@k = (docs in the top k with grade >= t) / (labelled docs with grade >= t).
- nR(rel=t)@k = (docs in the top k with grade >= t) / min(k, labelled docs with grade >= t).
- Judged@k = (docs in the top min(k, returned) with an effective label) / min(k, returned);
             0 for a query the run did not return anything for.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from judgepool.errors import UsageError
from judgepool.metrics.load import Labels, TopK
from judgepool.metrics.measures import Measure

Values = NDArray[np.float64]


def discounts(k: int) -> NDArray[np.float64]:
    """1 / log2(rank + 1) for ranks 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def ideal_gains(labels: Labels, k: int) -> NDArray[np.float64]:
    """(queries, k) the best possible gains at ranks 1..k: positive grades, highest first."""
    positive = labels.grades > 0
    levels = labels.grades[positive][::-1].astype(np.float64)  # descending
    if levels.size == 0:
        return np.zeros((labels.counts.shape[0], k))
    ends = np.cumsum(np.minimum(labels.counts[:, positive][:, ::-1], k), axis=1)
    # The level that fills rank j is the first whose cumulative count exceeds j.
    at = (ends[:, None, :] <= np.arange(k)[None, :, None]).sum(axis=2)
    return np.where(at < levels.size, levels[np.minimum(at, levels.size - 1)], 0.0)


def defined(measure: Measure, labels: Labels) -> NDArray[np.bool_]:
    """(queries,) the queries the measure has a value for (and averages over)."""
    threshold = measure.threshold
    if threshold is None:
        return np.ones(labels.counts.shape[0], dtype=bool)
    return labels.at_least(threshold) > 0


def _ratio(
    num: Values, den: NDArray[np.float64] | NDArray[np.int64], ok: NDArray[np.bool_]
) -> Values:
    """num / den where `ok`, NaN elsewhere (broadcast over runs)."""
    out = np.full(np.broadcast_shapes(num.shape, np.shape(den)), np.nan)
    np.divide(num, den, out=out, where=np.broadcast_to(ok, out.shape))
    return out


def per_query(measure: Measure, top: TopK, labels: Labels) -> Values:
    """(runs, queries) the measure's value per run and query; NaN where it is not defined."""
    if not measure.native or measure.k is None:
        raise UsageError(
            f"{measure} is not one of judgepool's own measures (ir-measures computes it)",
            "evaluate it through metrics.evaluate.evaluate(measures=[...])",
        )
    k: int = measure.k
    grades = top.grades[:, :, :k]
    if measure.kind == "Judged":
        shown = np.minimum(top.returned, k)
        labelled = (~np.isnan(grades)).sum(axis=2).astype(np.float64)
        judged = np.zeros(labelled.shape)
        np.divide(labelled, shown, out=judged, where=shown > 0)
        return judged
    ok = defined(measure, labels)
    if measure.kind == "nDCG":
        disc = discounts(k)
        dcg = np.where(grades > 0, grades, 0.0) @ disc
        idcg = ideal_gains(labels, k) @ disc
        return _ratio(dcg, idcg[None, :], ok[None, :])
    rel = int(measure.rel or 0)
    hits = (grades >= rel).sum(axis=2).astype(np.float64)
    relevant = labels.at_least(rel)
    if measure.kind == "R":
        return _ratio(hits, relevant[None, :], ok[None, :])
    return _ratio(hits, np.minimum(relevant, k)[None, :], ok[None, :])


def filled(
    top: TopK, labels: Labels, run: int, grade: int, depth: int | None = None
) -> tuple[TopK, Labels]:
    """One run's top k and the labels as they would be if every hole of that run's top `depth`
    (default: all of the loaded top k) had `grade`."""
    holes = top.holes[run]
    if depth is not None:
        holes = holes & (np.arange(holes.shape[1]) < depth)[None, :]
    grades = np.where(holes, float(grade), top.grades[run])[None, :, :]
    return TopK(grades, top.returned[run : run + 1]), labels.with_extra(grade, holes.sum(axis=1))
