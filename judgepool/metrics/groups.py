"""`--by group`: means and paired differences per query group, with a "too small" marker.

A group's figures are those of the evaluation, restricted to the evaluation-set queries in the
group (a query may be in several groups; a query in none counts only overall):
- per run and measure: n (the group's queries the measure averages), the mean and its 95%
  percentile bootstrap interval over those n queries (10,000 resamples, the evaluation's seed);
- per candidate and measure (compare): the mean difference candidate - baseline over those n
  queries, its paired bootstrap interval (the differences resampled over queries), the paired
  randomisation p-value, and Holm's correction over **every group x candidate x measure
  comparison of the call** (the overall comparisons keep their own family, so `--by group`
  changes no overall verdict and no `--fail-on` outcome).

**Too small** (`too_small`): the group's 95% interval is too wide for an effect of the overall
size: its margin of error (half its width, (hi - lo) / 2) is at least the overall effect,
(hi - lo) / 2 >= |overall effect|, or the group has fewer than 2 queries (no interval can be
estimated from one). Were the group's true difference the overall one, its interval would still
reach zero: the group cannot tell an effect of that size from no effect, so do not read "no
significant difference" in it as "no effect". The overall effect of a difference is the overall
delta of the same candidate and measure; of a mean (eval), the spread of the runs' overall means
on the measure (highest - lowest). With no overall effect to resolve (one run, or an effect of
exactly 0) the marker is None, unless the group has fewer than 2 queries. A group whose own
effect is far larger than the overall one can be significant and still marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from judgepool.defaults import BY
from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.metrics.bootstrap import (
    bootstrap_means,
    holm,
    percentile_interval,
    sign_flip_pvalues,
)
from judgepool.pooling.store.query_groups import group_members

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.evaluate import EvaluationFigures
    from judgepool.pooling.store.connection import Store

Interval = tuple[float, float]
MIN_QUERIES = 2  # fewer than this: no interval can be estimated


@dataclass(frozen=True)
class GroupMean:
    """One run's mean on one measure over one group's queries."""

    group: str
    run: str
    measure: str
    n: int
    mean: float | None
    ci95: Interval | None
    too_small: bool | None


@dataclass(frozen=True)
class GroupDelta:
    """One paired difference candidate - baseline on one measure over one group's queries."""

    group: str
    baseline: str
    candidate: str
    measure: str
    n: int
    delta: float | None
    ci95: Interval | None
    p: float | None
    p_holm: float | None
    significant: bool
    too_small: bool | None
    unreliable: bool


@dataclass(frozen=True)
class Groups:
    """The figures of every group; `tests` is the size of the groups' Holm family."""

    groups: tuple[str, ...]
    queries: dict[str, int]  # group -> its evaluation-set queries
    ungrouped: int  # evaluation-set queries in no group
    means: tuple[GroupMean, ...]
    deltas: tuple[GroupDelta, ...] = ()
    tests: int = 0


def too_small(n: int, ci: Interval | None, effect: float | None) -> bool | None:
    """The marker (module docstring): fewer than 2 queries, or a margin of error (half the
    interval) at least the overall effect; None when there is no overall effect to resolve."""
    if n < MIN_QUERIES or ci is None:
        return True
    if effect is None or effect == 0:
        return None
    return (ci[1] - ci[0]) / 2 >= abs(effect)


def _in_groups(ev: EvaluationFigures, members: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """group -> (queries,) mask over the evaluation set; groups with no member there kept."""
    index = {q: i for i, q in enumerate(ev.qids)}
    out: dict[str, NDArray[np.bool_]] = {}
    for group, qids in members.items():
        mask = np.zeros(len(ev.qids), dtype=bool)
        mask[[index[q] for q in qids if q in index]] = True
        out[group] = mask
    return out


def _interval(values: NDArray[np.float64], resamples: int, seed: int) -> list[Interval]:
    """Percentile intervals of the column means of (queries x columns) values."""
    low, high = percentile_interval(bootstrap_means(values, resamples, seed))
    return [(float(a), float(b)) for a, b in zip(low, high, strict=True)]


def _spread(ev: EvaluationFigures, measure: str) -> float | None:
    means = [ev.summaries[r].mean[measure] for r in ev.runs]
    known = [m for m in means if m is not None]
    return max(known) - min(known) if len(known) >= 2 else None


def group_means(ev: EvaluationFigures, members: Mapping[str, Sequence[str]]) -> Groups:
    """Every run's mean per group and measure (module docstring)."""
    masks = _in_groups(ev, members)
    means: list[GroupMean] = []
    for group, in_group in masks.items():
        for m in (str(x) for x in ev.measures):
            mask = ev.averaged[m] & in_group
            n = int(mask.sum())
            values = ev.values[m][:, mask]  # (runs, n)
            cis: list[Interval | None] = (
                list(_interval(values.T, ev.resamples, ev.seed)) if n else [None] * len(ev.runs)
            )
            effect = _spread(ev, m)
            for i, run in enumerate(ev.runs):
                mean = float(values[i].mean()) if n else None
                marker = too_small(n, cis[i], effect)
                means.append(GroupMean(group, run, m, n, mean, cis[i], marker))
    grouped = np.zeros(len(ev.qids), dtype=bool)
    for mask in masks.values():
        grouped |= mask
    return Groups(
        groups=tuple(masks),
        queries={g: int(mask.sum()) for g, mask in masks.items()},
        ungrouped=int((~grouped).sum()),
        means=tuple(means),
    )


def group_comparison(cmp: ComparisonFigures, members: Mapping[str, Sequence[str]]) -> Groups:
    """The means per group and, unless the gate refused, every candidate's paired difference
    per group and measure, Holm-adjusted over all of them together."""
    ev = cmp.evaluation
    found = group_means(ev, members)
    if not cmp.deltas:  # refused by the gate: no difference is computed
        return found
    overall = {(d.candidate, d.measure): d for d in cmp.deltas}
    base = ev.run_index(cmp.baseline)
    cand = [ev.run_index(c) for c in cmp.candidates]
    rows: list[dict[str, Any]] = []
    for group, in_group in _in_groups(ev, members).items():
        for m in dict.fromkeys(d.measure for d in cmp.deltas):
            mask = ev.averaged[m] & in_group
            n = int(mask.sum())
            diffs = (ev.values[m][cand][:, mask] - ev.values[m][base][mask]).T  # (n, candidates)
            p: list[float | None] = [None] * len(cand)
            cis: list[Interval | None] = [None] * len(cand)
            if n:
                p = [float(x) for x in sign_flip_pvalues(diffs, ev.resamples, ev.seed)]
                cis = list(_interval(diffs, ev.resamples, ev.seed))
            for j, candidate in enumerate(cmp.candidates):
                whole = overall[(candidate, m)]
                rows.append(
                    {
                        "group": group,
                        "candidate": candidate,
                        "measure": m,
                        "n": n,
                        "delta": float(diffs[:, j].mean()) if n else None,
                        "ci95": cis[j],
                        "p": p[j],
                        "too_small": too_small(n, cis[j], whole.delta),
                        "unreliable": whole.unreliable,
                    }
                )
    order = {c: i for i, c in enumerate(cmp.candidates)}
    rows.sort(key=lambda r: order[r["candidate"]])  # stable: groups, then candidates, measures
    rows.sort(key=lambda r: found.groups.index(r["group"]))
    tested = [r for r in rows if r["p"] is not None]
    for row in rows:
        row["p_holm"] = None
    for row, adjusted in zip(tested, holm([r["p"] for r in tested]), strict=True):
        row["p_holm"] = float(adjusted)
    deltas = tuple(
        GroupDelta(
            baseline=cmp.baseline,
            significant=r["p_holm"] is not None and r["p_holm"] < cmp.alpha,
            **r,
        )
        for r in rows
    )
    return Groups(found.groups, found.queries, found.ungrouped, found.means, deltas, len(tested))


def check_by(by: str | None, store: Store) -> dict[str, tuple[str, ...]]:
    """The groups `by` asks for (none when by is None); refused when the database has none."""
    if by is None:
        return {}
    if by not in BY:
        raise UsageError(
            f"cannot break results down by {by!r}",
            remedy("use {}", Param("by", "group")),
            value=by,
        )
    members = group_members(store)
    if not members:
        raise UsageError(
            remedy("{}: no query has a group in this database", Param("by", "group")),
            remedy(
                "ingest the groups: {} (or a group column in the queries file)",
                Call.of("ingest_queries", "topics.tsv", groups="groups.tsv"),
            ),
        )
    return members
