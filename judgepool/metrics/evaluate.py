"""`evaluate`: the four measures of some runs, per query and averaged, with bootstrap intervals.

Which queries count, stated in every report:
- the **evaluation set** is the queries with at least one effective label at the level (human,
  else the chosen judge's); a run that returned nothing for one of them scores 0 there;
- by default (`average="defined"`) a measure's mean is over the evaluation-set queries that have
  a doc at its threshold (grade >= 1 for nDCG, >= rel for R and nR, the rel of any other
  measure); the others are left out of that mean, and the number kept is reported
  (`EvaluationFigures.averaged`). Judged@k is averaged over the whole evaluation set;
- with `average="trec_eval"` every mean is over the whole evaluation set and a query with no doc
  at the threshold counts 0, exactly as `trec_eval -c` averages (trec_eval -c also counts 0 for a
  qrels query the run misses, as we always do, and ignores queries that are not in the qrels,
  as the evaluation set does), so means can be compared with published tables. Intervals and
  paired tests are then over that same set.

The 95% interval of a mean is a percentile bootstrap over those queries (10,000 resamples,
seeded). Runs with holes also get **bounds**: each mean as it is (every hole counted grade 0, which
changes nothing: a grade-0 label adds no gain, no ideal gain and no relevant doc) and as it would
be if every hole in that run's top k had the top grade (3, or the highest grade labelled if higher).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from judgepool.defaults import AVERAGE, Average
from judgepool.errors import Param, Placeholder, UsageError, remedy
from judgepool.metrics.bootstrap import bootstrap_means, percentile_interval
from judgepool.metrics.compute import defined, filled, per_query
from judgepool.metrics.external import (
    ExternalData,
    external_values,
    load_external,
    needed_depth,
    provider_name,
    with_holes_as,
)
from judgepool.metrics.idwarnings import id_warnings
from judgepool.metrics.load import EvalData, Labels, TopK, load
from judgepool.metrics.measures import Measure
from judgepool.metrics.spec import EvalSpec, check_average
from judgepool.pooling.pool import exact_judged
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import JudgeRunRow, fooled_judges

if TYPE_CHECKING:
    from judgepool.metrics.corrected import Trust

Interval = tuple[float, float]
TOP_GRADE = 3  # the judge's highest grade (UMBRELA scale 0-3)


@dataclass(frozen=True)
class RunSummary:
    """One run's means (None when no query is averaged), intervals, judged@k, holes and bounds.

    `judged_exact` is judged@k as an exact fraction (what the gate decides on); `judged` is its
    nearest float."""

    run: str
    mean: dict[str, float | None]
    ci95: dict[str, Interval | None]
    judged: float
    holes: int
    missing: int
    bounds: dict[str, tuple[float | None, float | None]] | None
    judged_exact: Fraction = Fraction(0)


@dataclass(frozen=True)
class EvaluationFigures:
    """Per-query values (arrays aligned to `qids`, NaN = left out) and per-run summaries."""

    level: str
    labeller: str | None
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
    average: Average = AVERAGE
    defined: dict[str, NDArray[np.bool_]] = field(default_factory=dict)  # queries with a value
    warnings: tuple[str, ...] = ()  # metrics.idwarnings: runs missing most queries, odd ids
    corrected: Trust | None = None  # judge-corrected means (metrics.corrected), judge labels only
    # The canary checks of judges whose labels count here and that were fooled by canaries.
    fooled: tuple[JudgeRunRow, ...] = ()

    def zeroed(self, measure: str) -> int:
        """How many averaged queries count 0 for want of a doc at the threshold (trec_eval)."""
        if self.average != "trec_eval" or measure not in self.defined:
            return 0
        return int((~self.defined[measure]).sum())

    def n(self, measure: str) -> int:
        """How many queries the measure's means are over."""
        return int(self.averaged[measure].sum())

    def left_out(self, measure: str) -> list[str]:
        """The evaluation-set queries without a doc at the measure's threshold."""
        return [q for q, kept in zip(self.qids, self.averaged[measure], strict=True) if not kept]

    def run_index(self, run: str) -> int:
        """The row of `run` in the value arrays."""
        if run not in self.runs:
            raise UsageError(
                f"run {run!r} is not in this evaluation ({', '.join(self.runs)})",
                remedy(
                    "evaluate it too (add {}), or pick one of those",
                    Param("runs", (Placeholder("NAME"),)),
                ),
                value=run,
            )
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
    average: str,
) -> dict[str, tuple[float | None, float | None]]:
    """Each measure's mean as it is and with every hole of the run (within the measure's depth)
    given the top grade."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for measure in measures:
        if measure.threshold is None:  # Judged@k and counts: holes are what they measure
            continue
        if measure.native:
            top, labels = filled(data.top, data.labels, run, top_grade, measure.k)
            high = _means(*_averaged(measure, per_query(measure, top, labels), labels, average))[0]
        elif external is not None:
            qrels, added = with_holes_as(external, data.runs[run], top_grade, measure.depth)
            labels = data.labels.with_extra(top_grade, added)
            values = external_values([measure], external, [data.runs[run]], qrels)[str(measure)]
            high = _means(*_averaged(measure, values, labels, average))[0]
        else:
            continue
        out[str(measure)] = (means[str(measure)], high)
    return out


def _averaged(
    measure: Measure, values: NDArray[np.float64], labels: Labels, average: str
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """(runs, queries) values and the (queries,) mask of the queries in the mean: the one place
    that decides which queries a mean is over (see the module docstring)."""
    mask = defined(measure, labels)
    if check_average(average) == "trec_eval":
        return np.where(mask[None, :], values, 0.0), np.ones_like(mask)
    return np.where(mask[None, :], values, np.nan), mask


def measure_values(
    data: EvalData,
    measures: Sequence[Measure],
    external: ExternalData | None,
    average: str = "defined",
) -> tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.bool_]]]:
    """(runs, queries) values of every measure (NaN where a query is not averaged) and the
    queries each measure averages over: native ones on judgepool's path, the rest by ir-measures."""
    others = [m for m in measures if not m.native]
    if others and external is None:
        raise UsageError(
            f"measures {', '.join(map(str, others))} need the rankings loaded",
            "evaluate through metrics.evaluate.evaluate, which reads them",
        )
    computed = external_values(others, external, data.runs) if external is not None else {}
    values: dict[str, NDArray[np.float64]] = {}
    averaged: dict[str, NDArray[np.bool_]] = {}
    for m in measures:
        name = str(m)
        raw = per_query(m, data.top, data.labels) if m.native else computed[name]
        values[name], averaged[name] = _averaged(m, raw, data.labels, average)
    return values, averaged


def judged_fractions(top: TopK, k: int) -> list[Fraction]:
    """Each run's judged@k, exactly, from the integer counts of labelled and shown docs."""
    labelled = (~np.isnan(top.grades[:, :, :k])).sum(axis=2)
    shown = np.minimum(top.returned, k)
    out = []
    for run in range(shown.shape[0]):
        pairs, n = np.unique(
            np.stack([labelled[run], shown[run]], axis=1), axis=0, return_counts=True
        )
        counts = [(int(a), int(b), int(c)) for (a, b), c in zip(pairs, n, strict=True)]
        out.append(exact_judged(counts, int(shown.shape[1])))
    return out


def evaluate_data(
    data: EvalData, spec: EvalSpec, external: ExternalData | None = None
) -> EvaluationFigures:
    """The evaluation of already loaded data (what `evaluate` does after reading the store);
    `external` holds the labels and rankings for measures computed by ir-measures."""
    measures = spec.chosen()
    resamples, seed, top_grade, average = spec.resamples, spec.seed, spec.top_grade, spec.average
    grade_max = int(data.labels.grades.max()) if data.labels.grades.size else TOP_GRADE
    top = max(TOP_GRADE, grade_max) if top_grade is None else top_grade
    values, averaged = measure_values(data, measures, external, average)
    boot = bootstrap_all(values, averaged, resamples, seed)
    judged = judged_fractions(data.top, data.k)
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
            bounds=(
                _bounds(data, measures, i, top, run_means, external, average) if holes[i] else None
            ),
            judged_exact=judged[i],
        )
    return EvaluationFigures(
        level=data.level,
        labeller=data.labeller,
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
        engines={
            str(m): "judgepool" if m.native else f"ir-measures ({provider_name(m)})"
            for m in measures
        },
        average=average,
        defined={str(m): defined(m, data.labels) for m in measures},
        warnings=id_warnings(
            data.ids,
            data.runs,
            data.qids,
            {
                run: [q for q, n in zip(data.qids, data.top.returned[i], strict=True) if n == 0]
                for i, run in enumerate(data.runs)
            },
            data.k,
        ),
    )


def load_for(
    store: Store,
    runs: Sequence[str] | None,
    measures: Sequence[Measure],
    level: str,
    labeller: str | None,
    k: int,
    view: str = "effective",
) -> tuple[EvalData, ExternalData | None]:
    """Read what `measures` need: the top k (deeper for deeper native measures) and, when some
    measure is computed by ir-measures, the labels and rankings it is given (`view`: which
    labels, pooling.store.judgments.label_view_sql)."""
    deepest = max([k, *(m.k for m in measures if m.native and m.k is not None)])
    data = load(store, runs, level=level, labeller=labeller, k=k, depth=deepest, view=view)
    others = [m for m in measures if not m.native]
    if not others:
        return data, None
    keys = run_keys(store, list(data.runs))
    external = load_external(store, level, labeller, keys, data.qids, needed_depth(others), view)
    return data, external


def evaluate(
    store: Store, runs: Sequence[str] | None = None, spec: EvalSpec | None = None
) -> EvaluationFigures:
    """The measures of `spec` (metrics/spec.py) of `runs` (default: every run), averaged over
    the queries `spec.average` says (see the module docstring); judged@k and holes at cutoff
    `spec.k`."""
    spec = spec or EvalSpec()
    chosen = spec.chosen()
    data, external = load_for(store, runs, chosen, spec.level, spec.labeller, spec.k)
    result = evaluate_data(data, spec, external)
    return replace(
        result,
        corrected=_judge_corrected(store, result),
        fooled=tuple(fooled_judges(store, spec.level, spec.labeller)),
    )


def _judge_corrected(store: Store, ev: EvaluationFigures) -> Trust | None:
    """The judge-corrected means (metrics/corrected.py), when a judge's labels are effective:
    the judge's view of the labels is read here, through the same functions as the plain one."""
    from judgepool.metrics.corrected import judge_corrected
    from judgepool.pooling.store.labels_by_labeller import effective_judge_labels

    judged = effective_judge_labels(store, ev.level, ev.labeller)
    if judged == 0:
        return None
    measures = [m for m in ev.measures if m.kind != "Judged"]
    data, external = load_for(store, ev.runs, measures, ev.level, ev.labeller, ev.k, "judge")
    values, mask = measure_values(data, measures, external, ev.average)
    return judge_corrected(store, ev, judged, data.qids, values, mask)
