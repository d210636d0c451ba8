"""How uncertain each query's figures are under the judge's labels: the score a weighted audit
draw (pooling/audit/samples.py, `design="weighted"`) draws queries in proportion to.

A uniform draw of 10 queries misses the few queries where a judge's errors sit (issue 21: on
TREC DL 2020, tasb vs splade-pp-ed R(rel=3)@10 was covered 72-78 % of the time at n = 10). Active
inference (Zrnic & Candes, "Active Statistical Inference", ICML 2024) draws the queries where
the predictions are least certain more often and weights each by the inverse of its inclusion
probability, which keeps the estimate unbiased whatever the uncertainty model says: the model
only decides how efficient the audit is, never whether the interval is right.

The model here: each judge label's true grade is drawn from P(true grade | judge grade), a
confusion matrix estimated from the pairs that have both a judge and a human label (calibration
and earlier audits; `confusion`), shrunk towards a prior that trusts the judge's grade about
half the time. For `draws` such relabellings of every judge-labelled pair a query's measures
read (its ranked pairs and the pairs behind the ideal ranking and the recall denominators), the
query's measures are recomputed with metrics.compute; the score is the root mean square, over
the draws, of the change in the ratio estimator's linearised value (metrics/ppi_ratio.py:
v (u - theta) with theta the judge's mean), summed over the measures and over the runs (or the
compared pairs of runs). A query without a judge label scores 0: its figures are known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgepool.metrics.compute import defined, per_query
from judgepool.metrics.load import Labels, TopK
from judgepool.metrics.measures import Measure
from judgepool.pooling.audit.judge_pairs import agreement_counts, judge_pairs
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store

#: The grades a judge gives and a person is modelled to give (UMBRELA's 0-3).
GRADES = 4
#: P(true grade | judge grade) before any evidence: the judge's grade half the time, a
#: neighbouring grade most of the rest.
PRIOR = np.array(
    [
        [0.55, 0.25, 0.13, 0.07],
        [0.25, 0.45, 0.20, 0.10],
        [0.10, 0.20, 0.45, 0.25],
        [0.07, 0.13, 0.25, 0.55],
    ]
)
#: How many observed pairs the prior weighs, per judge grade.
PRIOR_WEIGHT = 20.0
#: How many pairs the prior weighs once an audit exists (metrics/corrected.py's floor): the
#: audited pairs then speak for the judge, and a judge they find exact gets no floor to speak of.
#: At 1.0 the few grade-3 pairs of a 10-query audit left a perfect judge's DL19 splade-pp-ed -
#: tasb R(rel=3)@10 interval 1.31 times the plain one; at 0.5, 1.22, with the same coverage
#: under lenient, harsh and noisy judges (bench/bench_ppi_verdicts.py).
AUDIT_PRIOR_WEIGHT = 0.5
#: Relabellings per query (fewer when the evaluation set is large: about 200,000 query-draws).
DRAWS = 200
_BUDGET = 200_000


@dataclass(frozen=True)
class JudgeView:
    """The judge's view of the labels, with which of them are the judge's.

    `top` and `labels` as metrics.load reads them with the judge's labels; `pair_at` is, per run,
    query and rank, the index of the judge-labelled pair there (-1: a human label, or none);
    `pair_query` and `pair_grade` are, per judge-labelled pair, its query index and the judge's
    grade (every judge label of the query, ranked or not)."""

    top: TopK
    labels: Labels
    pair_at: NDArray[np.int64]
    pair_query: NDArray[np.int64]
    pair_grade: NDArray[np.int64]


def load_view(
    store: Store, runs: Sequence[str], level: str, labeller: str | None, depth: int
) -> tuple[tuple[str, ...], tuple[str, ...], JudgeView, NDArray[np.float64]]:
    """(runs, qids, the judge's view of `runs`' top `depth`, the human grade of each judge pair
    (NaN: none)), read from the store (pooling/audit/judge_pairs.py)."""
    keys = run_keys(store, list(runs) or None)
    names = tuple(keys)
    found = judge_pairs(store, level, labeller, [keys[n] for n in names], depth)
    nq = len(found.qids)
    row_of = {keys[n]: i for i, n in enumerate(names)}
    counts = np.zeros((nq, GRADES), dtype=np.int64)
    hist = found.hist
    keep = (hist["grade"] >= 0) & (hist["grade"] < GRADES)
    np.add.at(
        counts,
        (hist["qi"][keep].astype(np.int64), hist["grade"][keep].astype(np.int64)),
        hist["n"][keep].astype(np.int64),
    )
    cube = np.full((len(names), nq, depth), np.nan)
    pair_at = np.full((len(names), nq, depth), -1, dtype=np.int64)
    top = found.top
    ri = np.array([row_of[int(k)] for k in top["run_key"]], dtype=np.int64)
    qi, pos = top["qi"].astype(np.int64), top["pos"].astype(np.int64)
    cube[ri, qi, pos] = top["grade"]
    pair_at[ri, qi, pos] = top["pair"].astype(np.int64)
    returned = np.bincount(ri * nq + qi, minlength=len(names) * nq).reshape(len(names), nq)
    view = JudgeView(
        TopK(cube, returned.astype(np.int64)),
        Labels(np.arange(GRADES, dtype=np.int64), counts),
        pair_at,
        found.pairs["qi"].astype(np.int64),
        np.clip(found.pairs["grade"].astype(np.int64), 0, GRADES - 1),
    )
    human: NDArray[np.float64] = found.pairs["human"].astype(np.float64)
    return names, found.qids, view, human


def observed_agreement(store: Store, level: str, labeller: str | None) -> NDArray[np.float64]:
    """(judge grade, human grade) counts of the pairs both labelled (audits, calibrations)."""
    observed = np.zeros((GRADES, GRADES))
    for judge, human, n in agreement_counts(store, level, labeller):
        if 0 <= judge < GRADES and 0 <= human < GRADES:
            observed[judge, human] += n
    return observed


def confusion(
    observed: NDArray[np.float64] | None = None, weight: float = PRIOR_WEIGHT
) -> NDArray[np.float64]:
    """P(true | judge) rows from `observed[judge, true]` pair counts, shrunk towards PRIOR
    (which counts as `weight` pairs per judge grade)."""
    counts = PRIOR * weight
    if observed is not None:
        counts = counts + np.asarray(observed, dtype=np.float64)[:GRADES, :GRADES]
    rows: NDArray[np.float64] = counts / counts.sum(axis=1, keepdims=True)
    return rows


def _human_counts(view: JudgeView) -> NDArray[np.int64]:
    """(queries, GRADES) the label counts with every judge label taken out."""
    nq = view.labels.counts.shape[0]
    full = np.zeros((nq, GRADES), dtype=np.int64)
    for j, g in enumerate(view.labels.grades):
        if 0 <= g < GRADES:
            full[:, int(g)] += view.labels.counts[:, j]
    judged = np.bincount(
        view.pair_query * GRADES + np.clip(view.pair_grade, 0, GRADES - 1),
        minlength=nq * GRADES,
    ).reshape(nq, GRADES)
    left: NDArray[np.int64] = np.maximum(full - judged, 0)
    return left


def _linear(
    values: NDArray[np.float64], ok: NDArray[np.bool_], theta: NDArray[np.float64]
) -> NDArray[np.float64]:
    """v (u - theta): the ratio estimator's linearised value (0 where undefined)."""
    out: NDArray[np.float64] = np.where(ok, np.nan_to_num(values) - theta[..., None], 0.0)
    return out


def expected_errors(
    view: JudgeView,
    measures: Sequence[Measure],
    matrix: NDArray[np.float64],
    *,
    contrasts: Sequence[tuple[int, int]] = (),
    draws: int = DRAWS,
    seed: int = 0,
) -> tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]]:
    """(mean square, mean): measure -> (contrasts or runs, queries), over `draws` relabellings,
    of the change in each query's linearised value (module docstring): per (candidate, baseline)
    row pair of `contrasts` (baseline -1: the candidate alone), else per run. A query without a
    judge label gets 0."""
    runs, nq, depth = view.top.grades.shape
    pairs = view.pair_grade.size
    native = [m for m in measures if m.native and m.kind != "Judged" and m.k is not None]
    rows = len(contrasts) or runs
    total = {str(m): np.zeros((rows, nq)) for m in native}
    first = {str(m): np.zeros((rows, nq)) for m in native}
    if pairs == 0 or nq == 0:
        return total, first
    rng = np.random.default_rng(seed)
    cumulative = np.cumsum(matrix, axis=1)[:, : GRADES - 1]
    human = _human_counts(view)
    judged = view.pair_at >= 0
    safe = np.maximum(view.pair_at, 0)
    grades = np.arange(GRADES, dtype=np.int64)
    theta: dict[str, NDArray[np.float64]] = {}
    f_lin: dict[str, NDArray[np.float64]] = {}
    for m in native:
        base = per_query(m, view.top, view.labels)  # the judge's own values
        finite = np.isfinite(base)
        sums = np.where(finite, base, 0.0).sum(axis=1)
        theta[str(m)] = np.divide(sums, finite.sum(axis=1), out=np.zeros(runs), where=finite.any(1))
        f_lin[str(m)] = _linear(base, defined(m, view.labels)[None, :], theta[str(m)])
    done = 0
    chunk = max(1, min(draws, _BUDGET // max(nq, 1)))
    while done < draws:
        m = min(chunk, draws - done)
        u = rng.random((m, pairs))
        true = (u[:, :, None] > cumulative[view.pair_grade][None]).sum(axis=2)  # (m, pairs)
        cube = np.where(judged[None], true[:, safe].astype(np.float64), view.top.grades[None])
        cube = cube.reshape(m, runs, nq, depth).transpose(1, 0, 2, 3).reshape(runs, m * nq, depth)
        cells = (np.arange(m)[:, None] * nq + view.pair_query[None, :]) * GRADES + true
        counts = np.bincount(cells.ravel(), minlength=m * nq * GRADES).reshape(m, nq, GRADES)
        labels = Labels(grades, (counts + human[None]).reshape(m * nq, GRADES))
        top = TopK(cube, np.tile(view.top.returned, (1, m)))
        for measure in native:
            name = str(measure)
            values = per_query(measure, top, labels).reshape(runs, m, nq)
            ok = defined(measure, labels).reshape(m, nq)
            y_lin = np.where(ok[None], np.nan_to_num(values) - theta[name][:, None, None], 0.0)
            error = y_lin - f_lin[name][:, None, :]  # (runs, m, nq)
            if contrasts:
                error = np.stack([error[c] - (error[b] if b >= 0 else 0.0) for c, b in contrasts])
            total[name] += (error**2).sum(axis=1)
            first[name] += error.sum(axis=1)
        done += m
    has_pairs = np.bincount(view.pair_query, minlength=nq) > 0
    for name in total:
        total[name] = np.where(has_pairs[None, :], total[name] / draws, 0.0)
        first[name] = np.where(has_pairs[None, :], first[name] / draws, 0.0)
    return total, first


def uncertainty(
    view: JudgeView,
    measures: Sequence[Measure],
    matrix: NDArray[np.float64],
    *,
    contrasts: Sequence[tuple[int, int]] = (),
    draws: int = DRAWS,
    seed: int = 0,
) -> NDArray[np.float64]:
    """(queries,) each query's score (module docstring); `contrasts` are (candidate, baseline)
    run rows whose differences are scored, else every run on its own."""
    errors, _ = expected_errors(view, measures, matrix, contrasts=contrasts, draws=draws, seed=seed)
    nq = view.top.grades.shape[1]
    total = np.zeros(nq)
    for square in errors.values():
        total += square.sum(axis=0)
    score: NDArray[np.float64] = np.sqrt(total)
    return score


def design_floor(
    square: NDArray[np.float64], mean: NDArray[np.float64], probabilities: NDArray[np.float64]
) -> float:
    """The design variance of the audit's mean residual that the relabelling model predicts:
    sum_i (1 - pi_i) / pi_i E[(e_i - e_bar)^2] / N^2 over the N queries, with E[e_i^2] and
    E[e_i] = `square` and `mean` of one figure (expected_errors) and pi_i each query's inclusion
    probability (n / N for every query of a uniform draw). metrics/ppi_ratio.py takes it as a
    floor under the variance the audited residuals show: those miss the rare queries where a
    judge's errors sit whenever the draw misses them, the pair-level error rates do not."""
    size = square.size
    if size == 0:
        return 0.0
    centre = float(mean.mean())
    spread = np.clip(square - 2.0 * mean * centre + centre**2, 0.0, None)
    pi = np.clip(probabilities, 1e-12, 1.0)
    return float(((1.0 - pi) / pi * spread).sum()) / size**2
