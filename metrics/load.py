"""Read what the measures need from the store, once, into numpy arrays.

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

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from judgepool.pooling.errors import UsageError
from judgepool.pooling.idcheck import IdCheck, check_ids
from judgepool.pooling.labels import check_level, effective_labels_sql, label_levels
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store import Store

if TYPE_CHECKING:
    import duckdb


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

    grades: NDArray[np.float64]  # (runs, queries, k) grade at rank i + 1, NaN = no label / no doc
    returned: NDArray[np.int64]  # (runs, queries) min(k, docs the run returned for the query)

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
    judge: str | None
    k: int
    runs: tuple[str, ...]
    qids: tuple[str, ...]
    labels: Labels
    top: TopK
    ids: IdCheck = field(default_factory=lambda: IdCheck({}, ()))  # pooling.idcheck's findings


def _fetch_top(
    con: duckdb.DuckDBPyConnection, level: str, keys: list[int], k: int, lab: str, qix: str
) -> dict[str, NDArray[np.generic]]:
    return con.execute(
        f"""SELECT r.run_key, q.qi, r.rank - 1 AS pos,
                   coalesce(l.grade::DOUBLE, 'NaN'::DOUBLE) AS grade,
                   strlen(r.doc_id) <> length(r.doc_id) AS odd
            FROM ({rankings_sql(level, keys, k)}) r
            JOIN {qix} q ON q.qid = r.qid
            LEFT JOIN {lab} l ON l.qid = r.qid AND l.doc_id = r.doc_id"""
    ).fetchnumpy()


def _covered(keys: dict[str, int], top: dict[str, NDArray[np.generic]]) -> dict[str, int]:
    """How many evaluation-set queries each run ranks (from the top k just read)."""
    if not top["run_key"].size:
        return dict.fromkeys(keys, 0)
    runs, queries = top["run_key"].astype(np.int64), top["qi"].astype(np.int64)
    pairs = np.unique(np.stack([runs, queries]), axis=1)
    found, counts = np.unique(pairs[0], return_counts=True)
    per_key = {int(key): int(n) for key, n in zip(found, counts, strict=True)}
    return {name: per_key.get(key, 0) for name, key in keys.items()}


def load(
    store: Store,
    runs: Sequence[str] | None = None,
    level: str = "chunk",
    judge: str | None = None,
    k: int = 10,
) -> EvalData:
    """Read the labels and the top k of `runs` (default: every run, by name) at `level`."""
    level = check_level(level)
    keys = run_keys(store, runs)
    if not keys:
        raise UsageError("no runs to evaluate", "ingest one first: `judgepool ingest run FILE`")
    names = tuple(keys)
    key_list = [keys[n] for n in names]
    tag = uuid.uuid4().hex[:12]
    lab, qix = f"_metrics_lab_{tag}", f"_metrics_qix_{tag}"
    with store.read() as con:
        try:
            con.execute(
                f"CREATE TEMP TABLE {lab} AS "
                f"SELECT qid, doc_id, grade FROM ({effective_labels_sql(level, judge)})"
            )
            con.execute(
                f"CREATE TEMP TABLE {qix} AS SELECT qid, "
                f"(row_number() OVER (ORDER BY qid) - 1)::BIGINT AS qi "
                f"FROM (SELECT DISTINCT qid FROM {lab})"
            )
            qids = tuple(
                str(q) for (q,) in con.execute(f"SELECT qid FROM {qix} ORDER BY qi").fetchall()
            )
            hist = con.execute(
                f"SELECT q.qi, l.grade::BIGINT AS grade, count(*)::BIGINT AS n "
                f"FROM {lab} l JOIN {qix} q ON q.qid = l.qid GROUP BY ALL"
            ).fetchnumpy()
            top = _fetch_top(con, level, key_list, k, lab, qix)
            ids = check_ids(con, keys, level, judge, k, _covered(keys, top), bool(top["odd"].any()))
        finally:
            con.execute(f"DROP TABLE IF EXISTS {lab}")
            con.execute(f"DROP TABLE IF EXISTS {qix}")
    if not qids:
        who = "any judge" if judge is None else f"judge {judge!r}"
        others = [other for other in label_levels(store) if other != level]
        hint = (
            f"the labels are at the {others[0]} level: use --level {others[0]}"
            if others
            else "ingest qrels (`judgepool ingest qrels FILE`) or label the pool "
            "(`judgepool judge`)"
        )
        if judge is not None and not others:
            hint = f"check the judge's name (`judgepool status` lists labellers), or {hint}"
        raise UsageError(
            f"no query has an effective label at the {level} level (human labels or {who})",
            hint,
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
    cube = np.full((len(names), n_q, k), np.nan)
    cube[ri, qi, pos] = top["grade"]
    returned = np.bincount(ri * n_q + qi, minlength=len(names) * n_q).reshape(len(names), n_q)
    return EvalData(
        level=level,
        judge=judge,
        k=k,
        runs=names,
        qids=qids,
        labels=Labels(grades, counts),
        top=TopK(cube, returned),
        ids=ids,
    )
