"""Judge-corrected means and differences beside the plain ones, whenever a judge's labels are
among the effective labels: metrics/ppi_ratio.py's ratio estimator with the query as the unit.

For a measure and a run (or a difference candidate - baseline), over the N queries of the
evaluation set:
- the judge's side, every query: the value f_i with the **judge's view** of the labels
  (pooling.store.judgments.judge_view_labels_sql: the judge's label wherever it gave one, even on
  pairs a person labelled since) and b_i = 1 when the measure has a value there (a doc at its
  threshold by those labels; always 1 with `--average trec_eval`, where an undefined value
  counts 0);
- the human side, the **audited** queries of the latest audit sample at the level
  (pooling/audit/samples.py): those whose every judge pair now has a human label, so that every
  label their measures read (the ideal ranking and the recall denominators included) is a
  person's: the value Y_j with the effective labels and v_j = 1 when it is defined.

The truth is sum(v Y) / sum(v) over the N queries (human labels everywhere: which queries a
measure averages depends on the labels too), estimated by the ratio of two PPI++ means; the
audited queries weigh by the inverse of their inclusion probability (a weighted draw records
one per query; a uniform draw gives each n / N; a sample not yet fully labelled scales them by
the share labelled). A query of a weighted draw without any judge label counts as audited with
probability 1. The design's variance is floored by what the audited pairs' error rates predict
for all N queries (metrics/audit_design.py: the audit's own residuals miss the rare queries
where a judge's errors sit whenever the draw misses them). Intervals are kept inside the
measure's range (`clipped` says so).

Each difference then gets a verdict on its plain interval (metrics/trust_verdict.py): robust,
judge-biased (by how much), or too small to tell. Without an interval (no audit yet, fewer than
2 audited queries), each figure gets a forecast instead: how many audited queries would bring
its corrected interval to `WIDTH_FACTOR` times the plain interval's width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from judgepool.errors import Call
from judgepool.metrics.ppi import PRODUCT, PPIEstimate
from judgepool.metrics.ppi_ratio import RatioEstimate, corrected_ratio
from judgepool.metrics.ppi_size import AuditSize, audit_size_for_width
from judgepool.metrics.trust_verdict import TrustVerdict, judge_verdict

if TYPE_CHECKING:
    from judgepool.metrics.audit_design import JudgeView
    from judgepool.metrics.measures import Measure
    from judgepool.pooling.audit.samples import AuditSample
    from judgepool.pooling.store.connection import Store

Interval = tuple[float, float]


class Evaluated(Protocol):
    """What is read of an evaluation (metrics.evaluate.Evaluation, which imports this module)."""

    @property
    def level(self) -> str: ...
    @property
    def labeller(self) -> str | None: ...
    @property
    def k(self) -> int: ...
    @property
    def runs(self) -> tuple[str, ...]: ...
    @property
    def qids(self) -> tuple[str, ...]: ...
    @property
    def measures(self) -> tuple[Measure, ...]: ...
    @property
    def values(self) -> dict[str, NDArray[np.float64]]: ...
    @property
    def summaries(self) -> Mapping[str, Any]: ...
    @property
    def averaged(self) -> dict[str, NDArray[np.bool_]]: ...

    def run_index(self, run: str) -> int: ...


class Differenced(Protocol):
    """What is read of a difference (metrics.compare.Delta)."""

    @property
    def candidate(self) -> str: ...
    @property
    def measure(self) -> str: ...
    @property
    def delta(self) -> float | None: ...
    @property
    def ci95(self) -> Interval | None: ...


#: A forecast aims at a corrected interval this many times as wide as the plain one.
WIDTH_FACTOR = 2.0
#: `audit sample --queries` suggested when no forecast has a number.
DEFAULT_AUDIT = 10
#: Measure kinds whose values lie in [0, 1] (shares and normalised gains): a mean stays in
#: [0, 1], a difference in [-1, 1].
UNIT_KINDS = frozenset(
    {"nDCG", "R", "nR", "Judged", "P", "AP", "RR", "Rprec", "Success", "Bpref", "infAP", "ERR"}
)


@dataclass(frozen=True)
class Corrected:
    """One judge-corrected figure: the estimate (or its reason), the full ratio estimate behind
    it, the verdict on the plain interval (differences), and, without an interval, a forecast of
    the audit needed."""

    estimate: PPIEstimate
    verdict: TrustVerdict | None = None
    forecast: AuditSize | None = None
    ratio: RatioEstimate | None = None


@dataclass(frozen=True)
class Design:
    """How the audited queries came to be: per evaluation-set query whether it is audited now,
    its inclusion probability (all n / N for a uniform draw) and whether the draw was weighted."""

    audited: NDArray[np.bool_]
    probabilities: NDArray[np.float64]
    weighted: bool


@dataclass(frozen=True)
class Trust:
    """The judge-corrected side of an evaluation or comparison (see the module docstring)."""

    judge_labels: int  # effective labels that are a judge's
    sample: AuditSample | None  # the audit sample in use at the level
    audited: tuple[str, ...]  # evaluation-set queries audited now
    queries: int  # evaluation-set queries
    method: str
    reason: str | None  # why no figure has a corrected interval (None when some has)
    command: Call | None  # what to run next (draw a sample, or see its status)
    means: dict[tuple[str, str], Corrected] = field(default_factory=dict)  # (run, measure)
    deltas: dict[tuple[str, str], Corrected] = field(default_factory=dict)  # (candidate, measure)
    judge_values: dict[str, NDArray[np.float64]] = field(default_factory=dict, repr=False)
    judge_mask: dict[str, NDArray[np.bool_]] = field(default_factory=dict, repr=False)
    design: Design | None = field(default=None, repr=False)
    view: JudgeView | None = field(default=None, repr=False)  # for the variance floor
    matrix: NDArray[np.float64] | None = field(default=None, repr=False)  # P(true | judge)
    unusable: str | None = None  # why the audit sample in use cannot be used (weighted draws)


METHOD = (
    "PPI++ ratio estimator (numerator and denominator each with its lambda, the slope clipped "
    "to [0, 1]), nested-design variance floored by the audited pairs' error rates, "
    "Welch-Satterthwaite t quantile, intervals kept in the measure's range"
)


def _bounds(ev: Evaluated, measure: str, difference: bool) -> Interval | None:
    kind = next((m.kind for m in ev.measures if str(m) == measure), None)
    if kind not in UNIT_KINDS:
        return None
    return (-1.0, 1.0) if difference else (0.0, 1.0)


def _design(store: Store, ev: Evaluated, sample: AuditSample | None) -> tuple[Design, str | None]:
    """The audited queries and their inclusion probabilities, or why they cannot be used."""
    from judgepool.pooling.audit.samples import audited_queries

    size = len(ev.qids)
    none = np.zeros(size, dtype=bool)
    if sample is None:
        return Design(none, np.zeros(size), False), None
    present = set(ev.qids)
    drawn = [q for q in sample.qids if q in present]
    audited = audited_queries(store, drawn, ev.level, ev.labeller)
    if sample.design != "weighted":
        mask = np.array([q in audited for q in ev.qids], dtype=bool)
        n = int(mask.sum())
        return Design(mask, np.full(size, n / size if size else 0.0), False), None
    missing = [q for q in ev.qids if q not in sample.frame]
    if missing:
        return Design(none, np.zeros(size), True), (
            f"{len(missing)} queries of the evaluation set (e.g. {missing[0]}) were not in the "
            f"evaluation set weighted sample #{sample.id} was drawn from: their inclusion "
            "probability is unknown; draw a new sample (replace)"
        )
    share = len(audited) / len(sample.qids) if sample.qids else 0.0
    certain = {q for q, (score, _) in sample.frame.items() if score == 0.0}
    known = certain & audited_queries(store, sorted(certain & present), ev.level, ev.labeller)
    mask = np.array([q in audited or q in known for q in ev.qids], dtype=bool)
    pi = np.array(
        [1.0 if q in known else sample.frame[q][1] * share for q in ev.qids], dtype=np.float64
    )
    return Design(mask, np.clip(pi, 0.0, 1.0), True), None


def _floors(trust: Trust, measure: str, rows: Sequence[tuple[int, int]]) -> list[float]:
    """The design-variance floor of each figure (`rows`: (run, -1) for a mean, (candidate,
    baseline) for a difference); 0 where the model does not apply (ir-measures' measures)."""
    from judgepool.metrics.audit_design import design_floor, expected_errors
    from judgepool.metrics.measures import parse_measure

    view, matrix, design = trust.view, trust.matrix, trust.design
    if view is None or matrix is None or design is None or not design.audited.any():
        return [0.0] * len(rows)
    m = parse_measure(measure)
    if not m.native or m.kind == "Judged":
        return [0.0] * len(rows)
    square, mean = expected_errors(view, [m], matrix, contrasts=list(rows), draws=200, seed=0)
    pi = design.probabilities
    return [design_floor(square[measure][i], mean[measure][i], pi) for i in range(len(rows))]


def _estimate(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    u_all: NDArray[np.float64],
    v_all: NDArray[np.float64],
    design: Design,
    plain: Interval | None,
    bounds: Interval | None,
    floor: float,
) -> Corrected:
    """The ratio estimate from the judge's (a, b) and the audited queries' (u, v)."""
    at = np.flatnonzero(design.audited)
    ratio = corrected_ratio(
        a,
        b,
        u_all[at],
        v_all[at],
        at,
        probabilities=design.probabilities[at] if design.weighted else None,
        bounds=bounds,
        design_floor=floor,
    )
    forecast = None
    if ratio.ci is None and plain is not None and plain[1] > plain[0]:
        width = WIDTH_FACTOR * (plain[1] - plain[0])
        ys = u_all[at] if at.size >= 2 else ()
        where = at if at.size >= 2 else ()
        forecast = audit_size_for_width(width, a, ys, where, method=PRODUCT)
    return Corrected(ratio.estimate, None, forecast, ratio)


def _zero(values: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.nan_to_num(values, nan=0.0)


def judge_corrected(
    store: Store,
    ev: Evaluated,
    judged: int,
    qids: tuple[str, ...],
    values: dict[str, NDArray[np.float64]],
    mask: dict[str, NDArray[np.bool_]],
) -> Trust:
    """The corrected means of `ev` from the judge's view: `values` (runs, queries) per measure
    over the evaluation set `qids` and `mask` the queries each measure is over by the judge's
    labels (as metrics.evaluate.measure_values gives them); `judged` effective judge labels."""
    from judgepool.errors import DatabaseError
    from judgepool.metrics.audit_design import (
        AUDIT_PRIOR_WEIGHT,
        confusion,
        load_view,
        observed_agreement,
    )
    from judgepool.pooling.audit.samples import latest_sample

    if qids != ev.qids:
        raise DatabaseError(
            "the judge's view of the labels has another evaluation set than the effective labels "
            "(the labels changed during the evaluation?)",
            "run the command again",
        )
    sample = latest_sample(store, ev.level)
    design, why = _design(store, ev, sample)
    view = matrix = None
    if design.audited.any():
        depth = max([ev.k, *(m.k for m in ev.measures if m.native and m.k is not None)])
        _, view_qids, view, _ = load_view(store, ev.runs, ev.level, ev.labeller, depth)
        if view_qids != ev.qids:
            view = None
        observed = observed_agreement(store, ev.level, ev.labeller)
        matrix = confusion(observed, AUDIT_PRIOR_WEIGHT)
    trust = Trust(
        judge_labels=judged,
        sample=sample,
        audited=tuple(q for q, a in zip(ev.qids, design.audited, strict=True) if a),
        queries=len(ev.qids),
        method=METHOD,
        reason=None,
        command=None,
        judge_values=values,
        judge_mask=mask,
        design=design,
        view=view,
        matrix=matrix,
        unusable=why,
    )
    means: dict[tuple[str, str], Corrected] = {}
    for name in values:
        floors = _floors(trust, name, [(i, -1) for i in range(len(ev.runs))])
        b = mask[name].astype(np.float64)
        v = ev.averaged[name].astype(np.float64)
        for i, run in enumerate(ev.runs):
            means[run, name] = _estimate(
                _zero(values[name][i]) * b,
                b,
                _zero(ev.values[name][i]) * v,
                v,
                design,
                ev.summaries[run].ci95[name],
                _bounds(ev, name, False),
                floors[i],
            )
    return _explained(store, ev, replace(trust, means=means))


def with_deltas(
    store: Store,
    trust: Trust,
    ev: Evaluated,
    baseline: str,
    deltas: Sequence[Differenced],
) -> Trust:
    """`trust` with a corrected figure and a verdict for every difference of a comparison."""
    design = trust.design
    if design is None:
        return trust
    base = ev.run_index(baseline)
    found: dict[tuple[str, str], Corrected] = {}
    for d in deltas:
        if d.measure not in trust.judge_values:
            continue
        cand = ev.run_index(d.candidate)
        judge, human = trust.judge_values[d.measure], ev.values[d.measure]
        b = trust.judge_mask[d.measure].astype(np.float64)
        v = ev.averaged[d.measure].astype(np.float64)
        (floor,) = _floors(trust, d.measure, [(cand, base)])
        corrected = _estimate(
            (_zero(judge[cand]) - _zero(judge[base])) * b,
            b,
            (_zero(human[cand]) - _zero(human[base])) * v,
            v,
            design,
            d.ci95,
            _bounds(ev, d.measure, True),
            floor,
        )
        if corrected.ratio is not None and d.ci95 is not None and d.delta is not None:
            corrected = replace(corrected, verdict=judge_verdict(d.delta, d.ci95, corrected.ratio))
        found[d.candidate, d.measure] = corrected
    return _explained(store, ev, replace(trust, deltas=found))


def audit_command(
    store: Store,
    action: str,
    level: str,
    labeller: str | None,
    depth: int,
    queries: int | None = None,
) -> Call:
    """The exact `audit_sample` (or `audit_status`) call, as data: the CLI prints it as the
    `judgepool audit sample ...` line to copy."""
    sample = action == "sample"
    call = Call.of(
        f"audit_{action}",
        queries=(queries or DEFAULT_AUDIT) if sample else None,
        depth=depth if sample else None,
        level=None if level == "chunk" else level,
        labeller=labeller if sample else None,
    )
    return call.on(store.path)


def _explained(store: Store, ev: Evaluated, trust: Trust) -> Trust:
    """Fill `reason` and `command` when no figure has a corrected interval."""
    figures = list(trust.deltas.values()) or list(trust.means.values())
    if any(c.estimate.ci is not None for c in figures):
        return replace(trust, reason=None, command=None)
    sample = trust.sample
    if trust.unusable is not None:
        command = audit_command(store, "sample", ev.level, ev.labeller, ev.k)
        return replace(trust, reason=trust.unusable, command=command)
    if sample is None:
        forecasts = [c.forecast.queries for c in figures if c.forecast and c.forecast.queries]
        queries = min(max([*forecasts, DEFAULT_AUDIT]), trust.queries)
        reason = (
            f"no audit yet: judge labels are among the effective labels ({trust.judge_labels}) "
            f"and no audit sample exists at the {ev.level} level, so only the plain interval "
            "(which trusts the judge) is shown"
        )
        command = audit_command(store, "sample", ev.level, ev.labeller, ev.k, queries)
    else:
        done = len(trust.audited)
        reason = (
            f"{done} of the {len(sample.qids)} queries of audit sample #{sample.id} are fully "
            "audited: a judge-corrected interval needs at least 2 (and not all of the "
            f"{trust.queries} queries)"
        )
        command = audit_command(store, "status", ev.level, ev.labeller, ev.k)
    return replace(trust, reason=reason, command=command)
