"""`evaluate`: the four measures of some runs, per query and averaged, with bootstrap intervals.

Which queries count, stated in every report:
- the **evaluation set** is the queries with at least one effective label at the level (human,
  else the chosen judge's); a run that returned nothing for one of them scores 0 there;
- a measure's mean is over the evaluation-set queries that have a doc at its threshold (grade
  >= 1 for nDCG, >= rel for R and nR); the others are left out of that mean, and the number kept
  is reported (`Evaluation.averaged`). Judged@k is averaged over the whole evaluation set.

The 95% interval of a mean is a percentile bootstrap over those queries (10,000 resamples,
seeded). Runs with holes also get **bounds**: each mean as it is (every hole counted grade 0, which
changes nothing: a grade-0 label adds no gain, no ideal gain and no relevant doc) and as it would
be if every hole in that run's top k had the top grade (3, or the highest grade labelled if higher).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgepool.metrics.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_means,
    percentile_interval,
)
from judgepool.metrics.compute import defined, filled, per_query
from judgepool.metrics.external import (
    ExternalData,
    external_values,
    load_external,
    needed_depth,
    provider_name,
    with_holes_as,
)
from judgepool.metrics.load import EvalData, load
from judgepool.metrics.measures import (
    Measure,
    check_k,
    check_rel,
    default_measures,
    parse_measure,
)
from judgepool.pooling.errors import UsageError
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store import Store

Interval = tuple[float, float]
TOP_GRADE = 3  # the judge's highest grade (UMBRELA scale 0-3)


@dataclass(frozen=True)
class RunSummary:
    """One run's means (None when no query is averaged), intervals, judged@k, holes and bounds."""

    run: str
    mean: dict[str, float | None]
    ci95: dict[str, Interval | None]
    judged: float
    holes: int
    missing: int
    bounds: dict[str, tuple[float | None, float | None]] | None


@dataclass(frozen=True)
class Evaluation:
    """Per-query values (arrays aligned to `qids`, NaN = left out) and per-run summaries."""

    level: str
    judge: str | None
    k: int
    resamples: int
    seed: int
    top_grade: int
    measures: tuple[Measure, ...]
    runs: tuple[str, ...]
    qids: tuple[str, ...]
    values: dict[str, NDArray[np.float64]]  # measure -> (runs, queries)
    averaged: dict[str, NDArray[np.bool_]]  # measure -> (queries,) the queries in its mean
    summaries: dict[str, RunSummary]
    boot: dict[str, NDArray[np.float64]] = field(repr=False)  # measure -> (resamples, runs)
    engines: dict[str, str] = field(default_factory=dict)  # measure -> what computed it

    def n(self, measure: str) -> int:
        """How many queries the measure's means are over."""
        return int(self.averaged[measure].sum())

    def left_out(self, measure: str) -> list[str]:
        """The evaluation-set queries without a doc at the measure's threshold."""
        return [q for q, kept in zip(self.qids, self.averaged[measure], strict=True) if not kept]

    def run_index(self, run: str) -> int:
        """The row of `run` in the value arrays."""
        if run not in self.runs:
            raise UsageError(f"run {run!r} is not in this evaluation ({', '.join(self.runs)})")
        return self.runs.index(run)

    def per_query(self, run: str) -> dict[str, dict[str, float | None]]:
        """qid -> measure -> value (None where the query is left out of that measure)."""
        row = self.run_index(run)
        columns = {m: self.values[m][row] for m in self.values}
        return {
            qid: {m: _number(v[i]) for m, v in columns.items()} for i, qid in enumerate(self.qids)
        }



def _number(value: float | np.floating[Any]) -> float | None:
    return None if np.isnan(value) else float(value)


def _means(values: NDArray[np.float64], mask: NDArray[np.bool_]) -> list[float | None]:
    if not mask.any():
        return [None] * values.shape[0]
    return [float(x) for x in values[:, mask].mean(axis=1)]


def mask_groups(averaged: dict[str, NDArray[np.bool_]], names: Sequence[str]) -> list[list[str]]:
    """The measures of `names` grouped by the queries they average over (one resample each)."""
    groups: dict[bytes, list[str]] = {}
    for name in names:
        mask = averaged[name]
        groups.setdefault(np.packbits(mask).tobytes() + bytes([mask.size % 8]), []).append(name)
    return list(groups.values())


def bootstrap_all(
    values: dict[str, NDArray[np.float64]],
    averaged: dict[str, NDArray[np.bool_]],
    resamples: int,
    seed: int,
) -> dict[str, NDArray[np.float64]]:
    """Bootstrap means per measure; measures averaged over the same queries share resamples."""
    boot: dict[str, NDArray[np.float64]] = {}
    for names in mask_groups(averaged, list(values)):
        mask = averaged[names[0]]
        stacked = np.concatenate([values[m][:, mask].T for m in names], axis=1)
        means = bootstrap_means(stacked, resamples, seed)
        runs = values[names[0]].shape[0]
        for j, name in enumerate(names):
            boot[name] = means[:, j * runs : (j + 1) * runs]
    return boot


def _bounds(
    data: EvalData,
    measures: Sequence[Measure],
    run: int,
    top_grade: int,
    means: dict[str, float | None],
    external: ExternalData | None,
) -> dict[str, tuple[float | None, float | None]]:
    """Each measure's mean as it is and with every hole of the run (within the measure's depth)
    given the top grade."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for measure in measures:
        if measure.threshold is None:  # Judged@k and counts: holes are what they measure
            continue
        if measure.native:
            top, labels = filled(data.top, data.labels, run, top_grade, measure.k)
            high = _means(per_query(measure, top, labels), defined(measure, labels))[0]
        elif external is not None:
            qrels, added = with_holes_as(external, data.runs[run], top_grade, measure.depth)
            labels = data.labels.with_extra(top_grade, added)
            values = external_values([measure], external, [data.runs[run]], qrels)[str(measure)]
            high = _means(values, defined(measure, labels))[0]
        else:
            continue
        out[str(measure)] = (means[str(measure)], high)
    return out


def measure_values(
    data: EvalData, measures: Sequence[Measure], external: ExternalData | None
) -> tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.bool_]]]:
    """(runs, queries) values of every measure (NaN where a query has no value for it) and the
    queries each measure averages over: native ones on judgepool's path, the rest by ir-measures."""
    averaged = {str(m): defined(m, data.labels) for m in measures}
    others = [m for m in measures if not m.native]
    if others and external is None:
        raise UsageError(f"measures {', '.join(map(str, others))} need the rankings loaded")
    computed = external_values(others, external, data.runs) if external is not None else {}
    values: dict[str, NDArray[np.float64]] = {}
    for m in measures:
        name = str(m)
        if m.native:
            values[name] = per_query(m, data.top, data.labels)
        else:
            values[name] = np.where(averaged[name][None, :], computed[name], np.nan)
    return values, averaged


def evaluate_data(
    data: EvalData,
    measures: Sequence[Measure],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    top_grade: int | None = None,
    external: ExternalData | None = None,
) -> Evaluation:
    """The evaluation of already loaded data (what `evaluate` does after reading the store);
    `external` holds the labels and rankings for measures computed by ir-measures."""
    if resamples < 1:
        raise UsageError(f"resamples={resamples} is not positive", "use e.g. --resamples 10000")
    judged_measure = Measure("Judged", data.k)
    grade_max = int(data.labels.grades.max()) if data.labels.grades.size else TOP_GRADE
    top = max(TOP_GRADE, grade_max) if top_grade is None else top_grade
    values, averaged = measure_values(data, measures, external)
    boot = bootstrap_all(values, averaged, resamples, seed)
    judged = per_query(judged_measure, data.top, data.labels).mean(axis=1)
    holes = data.top.holes[:, :, : data.k].sum(axis=(1, 2))
    missing = (data.top.returned == 0).sum(axis=1)
    means = {name: _means(v, averaged[name]) for name, v in values.items()}
    intervals = {name: percentile_interval(b) for name, b in boot.items() if averaged[name].any()}
    summaries: dict[str, RunSummary] = {}
    for i, run in enumerate(data.runs):
        run_means = {name: means[name][i] for name in values}
        ci: dict[str, Interval | None] = {
            name: (float(intervals[name][0][i]), float(intervals[name][1][i]))
            if name in intervals
            else None
            for name in values
        }
        summaries[run] = RunSummary(
            run=run,
            mean=run_means,
            ci95=ci,
            judged=float(judged[i]),
            holes=int(holes[i]),
            missing=int(missing[i]),
            bounds=_bounds(data, measures, i, top, run_means, external) if holes[i] else None,
        )
    return Evaluation(
        level=data.level,
        judge=data.judge,
        k=data.k,
        resamples=resamples,
        seed=seed,
        top_grade=top,
        measures=tuple(measures),
        runs=data.runs,
        qids=data.qids,
        values=values,
        averaged=averaged,
        summaries=summaries,
        boot=boot,
        engines={str(m): "judgepool" if m.native else f"ir-measures ({provider_name(m)})"
                 for m in measures},
    )  # fmt: skip


def chosen_measures(
    measures: Sequence[str | Measure] | None, k: int, rel: int, key_rel: int
) -> tuple[Measure, ...]:
    """The measures asked for (ir-measures strings or Measures), or the four defaults at k."""
    if not measures:
        return default_measures(k, rel, key_rel)
    return tuple(
        dict.fromkeys(m if isinstance(m, Measure) else parse_measure(m) for m in measures)
    )


def load_for(
    store: Store,
    runs: Sequence[str] | None,
    measures: Sequence[Measure],
    level: str,
    judge: str | None,
    k: int,
) -> tuple[EvalData, ExternalData | None]:
    """Read what `measures` need: the top k (deeper for deeper native measures) and, when some
    measure is computed by ir-measures, the labels and rankings it is given."""
    deepest = max([k, *(m.k for m in measures if m.native and m.k is not None)])
    data = load(store, runs, level=level, judge=judge, k=k, depth=deepest)
    others = [m for m in measures if not m.native]
    if not others:
        return data, None
    keys = run_keys(store, list(data.runs))
    external = load_external(store, level, judge, keys, data.qids, needed_depth(others))
    return data, external


def evaluate(
    store: Store,
    runs: Sequence[str] | None = None,
    *,
    level: str = "chunk",
    judge: str | None = None,
    k: int = 10,
    rel: int = 2,
    key_rel: int = 3,
    measures: Sequence[str | Measure] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    top_grade: int | None = None,
) -> Evaluation:
    """`measures` (ir-measures strings; default nDCG@k, R(rel=key_rel)@k, nR(rel=rel)@k and
    Judged@k) of `runs` (default: every run); judged@k and holes at cutoff `k`."""
    check_k(k)
    check_rel(rel)
    check_rel(key_rel)
    chosen = chosen_measures(measures, k, rel, key_rel)
    data, external = load_for(store, runs, chosen, level, judge, k)
    return evaluate_data(data, chosen, resamples, seed, top_grade, external)
