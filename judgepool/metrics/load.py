"""What the measures need, read once (pooling.evaluation_rows) and turned into numpy arrays.

Three things are read in one short read-only connection:
- the **labels**: every effective label of the evaluation set, summarised per query as a count of
  docs per grade (enough for ideal DCG and for "how many docs reach grade t", at any threshold);
- the **top k** of every run on the evaluation set: the effective grade at each rank, NaN where
  the doc has no effective label (a hole) or where the run returned fewer than k docs;
- what `pooling.idcheck` finds about the runs' ids against the labels' (for the warnings).

The evaluation set is the queries with at least one effective label at the level (the queries
pooling's judged@k is averaged over); its order is qid order and every array follows it. Ranks
come from the store (trec_eval's order, fixed at ingest), so nothing here sorts by score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from judgepool.defaults import LEVEL, K
from judgepool.errors import Call, Param, Placeholder, UsageError, remedy
from judgepool.pooling.evaluation_rows import evaluation_rows
from judgepool.pooling.idcheck import IdCheck
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, label_levels

_STATUS = Call.of("status")  # lists the labellers


@dataclass(frozen=True)
class Labels:
    """The effective labels of each evaluation-set query, as counts per grade."""

    grades: NDArray[np.int64]  # (G,) the distinct grades present, ascending
    counts: NDArray[np.int64]  # (queries, G) labelled docs of each grade

    def at_least(self, threshold: int) -> NDArray[np.int64]:
        """(queries,) how many labelled docs reach `threshold` (the R / nR denominators)."""
        counts: NDArray[np.int64] = self.counts[:, self.grades >= threshold].sum(axis=1)
        return counts

    def with_extra(self, grade: int, extra: NDArray[np.int64]) -> Labels:
        """These labels plus `extra[q]` more docs of `grade` per query (for the bounds)."""
        grades = np.union1d(self.grades, [grade]).astype(np.int64)
        counts = np.zeros((self.counts.shape[0], grades.size), dtype=np.int64)
        counts[:, np.searchsorted(grades, self.grades)] = self.counts
        counts[:, int(np.searchsorted(grades, grade))] += extra
        return Labels(grades, counts)


@dataclass(frozen=True)
class TopK:
    """Each run's top k on the evaluation set."""

    grades: NDArray[np.float64]  # (runs, queries, depth) grade at rank i + 1, NaN = no label/doc
    returned: NDArray[np.int64]  # (runs, queries) min(depth, docs the run returned for the query)

    @property
    def present(self) -> NDArray[np.bool_]:
        """(runs, queries, k) whether the run put a doc at that rank."""
        k = self.grades.shape[2]
        return np.arange(k)[None, None, :] < self.returned[:, :, None]

    @property
    def holes(self) -> NDArray[np.bool_]:
        """(runs, queries, k) a doc is there but it has no effective label."""
        return self.present & np.isnan(self.grades)


@dataclass(frozen=True)
class EvalData:
    """Everything the measures are computed from, aligned to `qids` and `runs`."""

    level: str
    labeller: str | None
    k: int  # the report's cutoff (judged@k, holes); `top` may be deeper for deeper measures
    runs: tuple[str, ...]
    qids: tuple[str, ...]
    labels: Labels
    top: TopK
    ids: IdCheck = field(default_factory=lambda: IdCheck({}, ()))  # pooling.idcheck's findings


def load(
    store: Store,
    runs: Sequence[str] | None = None,
    level: str = LEVEL,
    labeller: str | None = None,
    k: int = K,
    depth: int | None = None,
    view: str = "effective",
) -> EvalData:
    """Read the labels and the top `depth` (default k) of `runs` (default: every run, by name) at
    `level`; `k` is the cutoff of the report (judged@k, holes); `view` which labels
    (pooling.store.judgments.label_view_sql: the effective ones, or the judge's)."""
    with store.read():  # one open of the file for the reads below (see Store.read)
        return _load(store, runs, check_level(level), labeller, k, max(k, depth or k), view)


def _load(
    store: Store,
    runs: Sequence[str] | None,
    level: str,
    labeller: str | None,
    k: int,
    depth: int,
    view: str,
) -> EvalData:
    keys = run_keys(store, runs)
    if not keys:
        raise UsageError(
            "no runs to evaluate",
            remedy("ingest one first: `{}`", Call.of("ingest_run", Placeholder("FILE"))),
        )
    names = tuple(keys)
    key_list = [keys[n] for n in names]
    rows = evaluation_rows(store, level, labeller, keys, depth, k, view)
    qids, hist, top = rows.qids, rows.hist, rows.top
    if not qids:
        who = "any judge" if labeller is None else f"judge {labeller!r}"
        others = [other for other in label_levels(store) if other != level]
        hint = (
            remedy(f"the labels are at the {others[0]} level: use {{}}", Param("level", others[0]))
            if others
            else remedy(
                "ingest qrels (`{}`) or label the pool (`{}`)",
                Call.of("ingest_qrels", Placeholder("FILE")),
                Call.of("judge"),
            )
        )
        if labeller is not None and not others:
            hint = remedy("check the judge's name (`{}` lists labellers), or ", _STATUS) + hint
        raise UsageError(
            f"no query has an effective label at the {level} level (human labels or {who})",
            hint,
            value=level,
        )
    n_q = len(qids)
    grades = np.unique(hist["grade"]).astype(np.int64)
    cell = hist["qi"].astype(np.int64) * grades.size + np.searchsorted(grades, hist["grade"])
    counts = np.bincount(cell, weights=hist["n"], minlength=n_q * grades.size)
    counts = counts.astype(np.int64).reshape(n_q, grades.size)

    order = np.argsort(np.asarray(key_list))
    sorted_keys = np.asarray(key_list)[order]
    ri = order[np.searchsorted(sorted_keys, top["run_key"])]
    qi = top["qi"].astype(np.int64)
    pos = top["pos"].astype(np.int64)
    cube = np.full((len(names), n_q, depth), np.nan)
    cube[ri, qi, pos] = top["grade"]
    returned = np.bincount(ri * n_q + qi, minlength=len(names) * n_q).reshape(len(names), n_q)
    return EvalData(
        level=level,
        labeller=labeller,
        k=k,
        runs=names,
        qids=qids,
        labels=Labels(grades, counts),
        top=TopK(cube, returned),
        ids=rows.ids,
    )
