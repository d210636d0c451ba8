"""Judge-corrected means and differences beside the plain ones, whenever a judge's labels are
among the effective labels: PPI++ (metrics/ppi.py, the PRODUCT method) with the query as the unit.

For a measure and a run (or a difference candidate - baseline):
- f_i is the per-query value with the **judge's view** of the labels (pooling.store.judgments
  .judge_view_labels_sql: the judge's label wherever it gave one, even on pairs a person labelled
  since; the human label elsewhere), for every query of the evaluation set;
- Y_i is the same value with the effective labels (human labels win), on the **audited** queries:
  the queries of the latest audit sample at the level (pooling/audit/samples.py, drawn uniformly
  at random) whose every pair that the evaluated runs rank in their top k and that has a judge
  label now has a human label too.

Which queries: the measure's queries in the judge's view (those with a doc at its threshold, or
all of them with `--average trec_eval`), fixed by f alone, so that the audited ones among them are
still a uniform random subset. An audited query on which the human labels leave the measure
undefined (no doc at its threshold) counts 0 there, as trec_eval -c counts it. The corrected
estimate is then unbiased for the mean of Y over those queries, and its interval speaks, like the
plain bootstrap's, for queries drawn like these.

A difference is **robust** when the plain and the corrected 95% intervals both exclude zero on the
same side or both include it, **judge-dependent** otherwise. Without an interval (no audit yet,
fewer than 2 audited queries), each figure gets a forecast instead: how many audited queries
would bring its corrected interval to `WIDTH_FACTOR` times the plain interval's width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from judgepool.errors import Call
from judgepool.metrics.ppi import PRODUCT, PPIEstimate, Verdict, ppi_mean, verdict
from judgepool.metrics.ppi_size import AuditSize, audit_size_for_width

if TYPE_CHECKING:
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
    def ci95(self) -> Interval | None: ...


#: A forecast aims at a corrected interval this many times as wide as the plain one.
WIDTH_FACTOR = 2.0
#: `audit sample --queries` suggested when no forecast has a number.
DEFAULT_AUDIT = 10


@dataclass(frozen=True)
class Corrected:
    """One judge-corrected figure: the PPI++ estimate (or its reason), the verdict against the
    plain interval (differences), and, without an interval, a forecast of the audit needed."""

    estimate: PPIEstimate
    verdict: Verdict | None = None
    forecast: AuditSize | None = None


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


def _zero_nan(values: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.nan_to_num(values, nan=0.0)


def _over(ev: Evaluated, measure: str) -> NDArray[np.bool_]:
    """The queries a corrected figure is over: those the plain figure averages, so that the two
    intervals estimate the same thing. A query whose value does not exist under the judge's
    labels (no doc the judge called relevant: an undefined nDCG or recall) counts 0 there, as in
    trec_eval, rather than leaving the query out: leaving it out would drop exactly the queries
    where the judge missed most (a query of DL19 where the judge found nothing relevant in TAS-B's
    holes and the audit found a grade-3 passage)."""
    return ev.averaged[measure]


def _estimate(
    f: NDArray[np.float64],
    y_all: NDArray[np.float64],
    audited: NDArray[np.bool_],
    plain: Interval | None,
) -> Corrected:
    """PPI++ over the queries of `f` (already restricted), the audited ones' Y from `y_all`."""
    positions = np.flatnonzero(audited)
    estimate = ppi_mean(f, y_all[positions], positions, method=PRODUCT)
    forecast = None
    if estimate.ci is None and plain is not None and plain[1] > plain[0]:
        width = WIDTH_FACTOR * (plain[1] - plain[0])
        ys = y_all[positions] if positions.size >= 2 else ()
        at = positions if positions.size >= 2 else ()
        forecast = audit_size_for_width(width, f, ys, at, method=PRODUCT)
    return Corrected(estimate, None, forecast)


def judge_corrected(
    store: Store,
    ev: Evaluated,
    judged: int,
    qids: tuple[str, ...],
    values: dict[str, NDArray[np.float64]],
    mask: dict[str, NDArray[np.bool_]],
) -> Trust:
    """The corrected means of `ev` from the judge's view: `values` (runs, queries) per measure
    over the evaluation set `qids` and `mask` the queries each measure is over (as
    metrics.evaluate.measure_values gives them); `judged` effective judge labels."""
    from judgepool.errors import DatabaseError
    from judgepool.pooling.audit.samples import audited_queries, latest_sample

    if qids != ev.qids:
        raise DatabaseError(
            "the judge's view of the labels has another evaluation set than the effective labels "
            "(the labels changed during the evaluation?)",
            "run the command again",
        )
    sample = latest_sample(store, ev.level)
    audited: set[str] = set()
    if sample is not None:
        wanted = [q for q in sample.qids if q in set(ev.qids)]
        audited = audited_queries(store, wanted, ev.level, ev.labeller, ev.runs, ev.k)
    is_audited = np.array([q in audited for q in ev.qids], dtype=bool)
    means: dict[tuple[str, str], Corrected] = {}
    for name in values:
        kept = _over(ev, name)
        for i, run in enumerate(ev.runs):
            f = _zero_nan(values[name][i, kept])
            y = _zero_nan(ev.values[name][i, kept])
            means[run, name] = _estimate(f, y, is_audited[kept], ev.summaries[run].ci95[name])
    trust = Trust(
        judge_labels=judged,
        sample=sample,
        audited=tuple(q for q in ev.qids if q in audited),
        queries=len(ev.qids),
        method=PRODUCT.describe(),
        reason=None,
        command=None,
        means=means,
        judge_values=values,
        judge_mask=mask,
    )
    return _explained(store, ev, trust)


def with_deltas(
    store: Store,
    trust: Trust,
    ev: Evaluated,
    baseline: str,
    deltas: Sequence[Differenced],
) -> Trust:
    """`trust` with a corrected figure and a verdict for every difference of a comparison."""
    audited = set(trust.audited)
    is_audited = np.array([q in audited for q in ev.qids], dtype=bool)
    base = ev.run_index(baseline)
    found: dict[tuple[str, str], Corrected] = {}
    for d in deltas:
        if d.measure not in trust.judge_values:
            continue
        kept = _over(ev, d.measure)
        cand = ev.run_index(d.candidate)
        judge = trust.judge_values[d.measure]
        f = _zero_nan(judge[cand, kept]) - _zero_nan(judge[base, kept])
        y = _zero_nan(ev.values[d.measure][cand, kept]) - _zero_nan(
            ev.values[d.measure][base, kept]
        )
        corrected = _estimate(f, y, is_audited[kept], d.ci95)
        if corrected.estimate.ci is not None and d.ci95 is not None:
            corrected = replace(corrected, verdict=verdict(d.ci95, corrected.estimate.ci))
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
        return trust
    sample = trust.sample
    if sample is None:
        forecasts = [c.forecast.queries for c in figures if c.forecast and c.forecast.queries]
        queries = min(max(forecasts, default=DEFAULT_AUDIT), trust.queries)
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
