"""Why a run's mean moved although none of its own labels did: the ideal ranking changed.

nDCG@k divides a run's DCG by the DCG of the ideal ranking of every labelled doc of the query;
R@k and nR@k divide by the number of relevant docs. So a new relevant label of a doc that a run
did not rank in its top k lowers that run's nDCG (and R, nR) on that query, even when the run
has no hole at all; and a query whose first relevant label arrives joins the mean. Between two
evaluations of the same runs (a backfill in between), `outside_shifts` finds the runs whose mean
changed although no label written in between lies in their top k, and names the queries: what
the dashboard explains where it happens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from judgepool.metrics.evaluate import EvaluationFigures

TOLERANCE = 1e-9


@dataclass(frozen=True)
class Shift:
    """One run's mean on one measure, before and after, moved by labels outside its top k."""

    run: str
    measure: str
    before: float
    after: float
    changed: tuple[str, ...]  # queries whose value changed (none had a new label in its top k)
    entered: tuple[str, ...]  # queries that joined the mean (their first doc at the threshold)
    left: tuple[str, ...]  # queries that left it
    holes: int  # holes in the run's top k now


def _values(ev: EvaluationFigures, run: str, measure: str) -> dict[str, float]:
    """qid -> value of the queries the measure's mean is over."""
    row = ev.values[measure][ev.run_index(run)]
    kept = ev.averaged[measure]
    return {q: float(row[i]) for i, q in enumerate(ev.qids) if kept[i] and not np.isnan(row[i])}


def outside_shifts(
    before: EvaluationFigures, after: EvaluationFigures, relabelled: Mapping[str, set[str]]
) -> list[Shift]:
    """Runs of both evaluations whose mean moved although no label written in between is in
    their top k (`relabelled`: run -> queries where one is, from pooling.labels_in_top).

    The two evaluations must be of the same runs' rankings at the same level and k; a run
    with any new label in its top k is left out (its own labels may explain its move)."""
    if (before.level, before.k) != (after.level, after.k):
        return []
    found = []
    for run in after.runs:
        if run not in before.runs or relabelled.get(run):
            continue
        for m in after.measures:
            name = str(m)
            if m.threshold is None or name not in before.values:
                continue
            old, new = before.summaries[run].mean.get(name), after.summaries[run].mean[name]
            if old is None or new is None or abs(new - old) <= TOLERANCE:
                continue
            was, now = _values(before, run, name), _values(after, run, name)
            found.append(
                Shift(
                    run=run,
                    measure=name,
                    before=old,
                    after=new,
                    changed=tuple(q for q in now if q in was and abs(now[q] - was[q]) > TOLERANCE),
                    entered=tuple(q for q in now if q not in was),
                    left=tuple(q for q in was if q not in now),
                    holes=after.summaries[run].holes,
                )
            )
    return found
