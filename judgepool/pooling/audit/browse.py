"""Audit queries: browse labels by run, query, grade, source, labeller and status; one pair's labels
with full provenance; and a seeded sample of judge-labelled pairs, stratified by judge grade.

These are what a person checking a judge needs (the dashboard's Audit page is a thin view over
them). Every function reads in one short connection and returns plain values.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from judgepool.errors import UsageError
from judgepool.pooling.pool import check_depth
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import (
    check_level,
    effective_labels_sql,
    latest_labels_sql,
    quote,
)

Pair = tuple[str, str]


@dataclass(frozen=True)
class LabelFilter:
    """Which labels to list; an empty tuple means no restriction on that field.

    `runs` keeps the pairs that any of these runs ranks in its top `depth` at the level.
    """

    level: str = "chunk"
    runs: tuple[str, ...] = ()
    depth: int = 10
    qids: tuple[str, ...] = ()
    grades: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()
    labellers: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelRow:
    """One label in a listing; `effective` says whether it is the pair's effective label."""

    id: int
    qid: str
    doc_id: str
    grade: int | None
    source: str
    labeller: str
    status: str
    effective: bool
    created_at: str
    note: str | None


@dataclass(frozen=True)
class LabelListing:
    """The first `limit` labels matching a filter, and how many match in all."""

    total: int
    rows: list[LabelRow]


@dataclass(frozen=True)
class Facets:
    """The values each filter can take at a level (for pickers)."""

    qids: list[str]
    labellers: list[str]
    grades: list[int]
    statuses: list[str]
    sources: list[str]


@dataclass(frozen=True)
class LabelDetail:
    """Every field of one label, provenance parsed."""

    id: int
    grade: int | None
    source: str
    labeller: str
    status: str
    raw_output: str | None
    tokens_in: int | None
    tokens_out: int | None
    cost: float | None
    latency_s: float | None
    provenance: dict[str, Any] | None
    note: str | None
    created_at: str


@dataclass(frozen=True)
class PairDetail:
    """One (query, doc) pair: texts, where runs rank it, and every label it ever got."""

    qid: str
    doc_id: str
    level: str
    query: str | None
    passages: list[tuple[str, str | None]]  # (doc id, text): the doc, or its chunks at doc level
    ranks: list[tuple[str, int]]  # (run, rank at the level), best first
    labels: list[LabelDetail] = field(default_factory=list)  # newest first
    effective_id: int | None = None


@dataclass(frozen=True)
class SampledPair:
    """A pair drawn for audit, with the judge grade it was stratified by."""

    qid: str
    doc_id: str
    judge_grade: int


def _stamp(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else str(value)


def _where(flt: LabelFilter) -> tuple[str, dict[str, Any]]:
    clauses = [f"j.level = {quote(check_level(flt.level))}"]
    params: dict[str, Any] = {}
    for column, values in (
        ("qid", flt.qids),
        ("grade", flt.grades),
        ("source", flt.sources),
        ("labeller", flt.labellers),
        ("status", flt.statuses),
    ):
        if values:
            clauses.append(f"list_contains(${column}s, j.{column})")
            params[f"{column}s"] = list(values)
    return " AND ".join(clauses), params


def list_labels(
    store: Store, flt: LabelFilter, labeller: str | None = None, limit: int = 500
) -> LabelListing:
    """Labels matching `flt`, newest first; `judge` decides which label is effective."""
    where, params = _where(flt)
    join = ""
    if flt.runs:
        check_depth(flt.depth)
        keys = list(run_keys(store, flt.runs).values())
        ranked = rankings_sql(flt.level, keys, flt.depth)
        join = f"JOIN (SELECT DISTINCT qid, doc_id FROM ({ranked})) r USING (qid, doc_id)"
    effective = effective_labels_sql(flt.level, labeller)
    with store.read() as con:
        total = con.execute(f"SELECT count(*) FROM judgments j {join} WHERE {where}", params)
        counted = total.fetchone()
        rows = con.execute(
            f"""SELECT j.id, j.qid, j.doc_id, j.grade, j.source, j.labeller, j.status,
                       e.judgment_id IS NOT NULL, j.created_at, j.note
                FROM judgments j {join}
                LEFT JOIN ({effective}) e ON e.judgment_id = j.id
                WHERE {where} ORDER BY j.id DESC LIMIT {int(limit)}""",
            params,
        ).fetchall()
    return LabelListing(
        total=int(counted[0]) if counted else 0,
        rows=[
            LabelRow(
                int(r[0]),
                str(r[1]),
                str(r[2]),
                None if r[3] is None else int(r[3]),
                str(r[4]),
                str(r[5]),
                str(r[6]),
                bool(r[7]),
                _stamp(r[8]),
                r[9],
            )
            for r in rows
        ],
    )


def facets(store: Store, level: str) -> Facets:
    """The queries, labellers, grades, statuses and sources that labels at `level` have."""
    lvl = quote(check_level(level))
    with store.read() as con:

        def distinct(column: str) -> list[Any]:
            found = con.execute(
                f"SELECT DISTINCT {column} FROM judgments WHERE level = {lvl} "
                f"AND {column} IS NOT NULL ORDER BY 1"
            ).fetchall()
            return [v for (v,) in found]

        return Facets(
            qids=[str(v) for v in distinct("qid")],
            labellers=[str(v) for v in distinct("labeller")],
            grades=[int(v) for v in distinct("grade")],
            statuses=[str(v) for v in distinct("status")],
            sources=[str(v) for v in distinct("source")],
        )


def pair_detail(
    store: Store, qid: str, doc_id: str, level: str = "chunk", labeller: str | None = None
) -> PairDetail:
    """Everything known about one pair at `level` (texts, ranks, labels with provenance)."""
    level = check_level(level)
    keys = run_keys(store)
    names = {v: k for k, v in keys.items()}
    pair = {"qid": qid, "doc_id": doc_id}
    with store.read() as con:
        query = con.execute("SELECT text FROM queries WHERE qid = $qid", {"qid": qid}).fetchone()
        if level == "chunk":
            passages = con.execute(
                "SELECT doc_id, text FROM docs WHERE doc_id = $doc_id", {"doc_id": doc_id}
            ).fetchall()
        else:
            passages = con.execute(
                "SELECT doc_id, text FROM docs WHERE coalesce(parent_id, doc_id) = $doc_id "
                "ORDER BY doc_id LIMIT 50",
                {"doc_id": doc_id},
            ).fetchall()
        ranks = (
            con.execute(
                f"SELECT run_key, rank FROM ({rankings_sql(level, list(keys.values()))}) "
                "WHERE qid = $qid AND doc_id = $doc_id ORDER BY rank, run_key",
                pair,
            ).fetchall()
            if keys
            else []
        )
        labels = con.execute(
            f"""SELECT id, grade, source, labeller, status, raw_output, tokens_in, tokens_out,
                       cost, latency_s, provenance, note, created_at
                FROM judgments WHERE qid = $qid AND doc_id = $doc_id AND level = {quote(level)}
                ORDER BY id DESC""",
            pair,
        ).fetchall()
        effective = con.execute(
            f"SELECT judgment_id FROM ({effective_labels_sql(level, labeller)}) "
            "WHERE qid = $qid AND doc_id = $doc_id",
            pair,
        ).fetchone()
    return PairDetail(
        qid=qid,
        doc_id=doc_id,
        level=level,
        query=None if query is None else str(query[0]),
        passages=[(str(d), t) for d, t in passages],
        ranks=[(names[int(k)], int(r)) for k, r in ranks],
        labels=[
            LabelDetail(
                id=int(r[0]),
                grade=None if r[1] is None else int(r[1]),
                source=str(r[2]),
                labeller=str(r[3]),
                status=str(r[4]),
                raw_output=r[5],
                tokens_in=r[6],
                tokens_out=r[7],
                cost=r[8],
                latency_s=r[9],
                provenance=None if r[10] is None else json.loads(r[10]),
                note=r[11],
                created_at=_stamp(r[12]),
            )
            for r in labels
        ],
        effective_id=None if effective is None else int(effective[0]),
    )


def audit_sample(
    store: Store, per_grade: int, seed: int, level: str = "chunk", labeller: str | None = None
) -> list[SampledPair]:
    """Up to `per_grade` judge-labelled pairs for each judge grade, drawn with `seed`, shuffled.

    The draw depends only on the judge's labels and the seed (not on which pairs a human already
    labelled), so drawing again with the same seed gives the same sample and progress is kept.
    The result is shuffled so an auditor does not see the pairs grouped by the judge's grade.
    """
    if per_grade < 1:
        raise UsageError(
            f"sample size {per_grade} per grade is not positive", "ask for 1 or more per grade"
        )
    with store.read() as con:
        rows = con.execute(
            f"SELECT qid, doc_id, grade FROM ({latest_labels_sql(level, 'judge', labeller)}) "
            "ORDER BY grade, qid, doc_id"
        ).fetchall()
    by_grade: dict[int, list[SampledPair]] = {}
    for qid, doc_id, grade in rows:
        by_grade.setdefault(int(grade), []).append(SampledPair(str(qid), str(doc_id), int(grade)))
    rng = random.Random(seed)
    drawn: list[SampledPair] = []
    for grade in sorted(by_grade):
        stratum = by_grade[grade]
        drawn.extend(rng.sample(stratum, min(per_grade, len(stratum))))
    rng.shuffle(drawn)
    return drawn


def human_labelled(store: Store, pairs: Iterable[Pair], level: str = "chunk") -> set[Pair]:
    """Which of `pairs` have an ok human label at `level` (audit progress)."""
    wanted = list(dict.fromkeys(pairs))
    if not wanted:
        return set()
    with store.read() as con:
        found = con.execute(
            f"""SELECT DISTINCT j.qid, j.doc_id FROM judgments j
                JOIN (SELECT unnest($qids) AS qid, unnest($docs) AS doc_id) p
                  ON p.qid = j.qid AND p.doc_id = j.doc_id
                WHERE j.level = {quote(check_level(level))} AND j.source = 'human'
                  AND j.status = 'ok'""",
            {"qids": [q for q, _ in wanted], "docs": [d for _, d in wanted]},
        ).fetchall()
    return {(str(q), str(d)) for q, d in found}


def pairs_of(sample: Sequence[SampledPair]) -> list[Pair]:
    """The (qid, doc_id) of sampled pairs, in order."""
    return [(s.qid, s.doc_id) for s in sample]


@dataclass(frozen=True)
class RankedDoc:
    """One row of a run's ranking for a query, with the doc's effective label (None: a hole)."""

    rank: int
    doc_id: str
    grade: int | None
    source: str | None
    labeller: str | None


def ranked_with_labels(
    store: Store,
    runs: Sequence[str],
    qid: str,
    level: str = "chunk",
    labeller: str | None = None,
    depth: int = 10,
) -> dict[str, list[RankedDoc]]:
    """Each run's top `depth` for `qid`, every doc with its effective label and its source."""
    check_depth(depth)
    keys = run_keys(store, runs)
    names = {v: k for k, v in keys.items()}
    with store.read() as con:
        rows = con.execute(
            f"""SELECT r.run_key, r.rank, r.doc_id, e.grade, e.source, e.labeller
                FROM ({rankings_sql(level, list(keys.values()), depth)}) r
                LEFT JOIN ({effective_labels_sql(level, labeller)}) e
                  ON e.qid = r.qid AND e.doc_id = r.doc_id
                WHERE r.qid = $qid ORDER BY r.run_key, r.rank""",
            {"qid": qid},
        ).fetchall()
    found: dict[str, list[RankedDoc]] = {run: [] for run in keys}
    for key, rank, doc_id, grade, source, labeller in rows:
        found[names[int(key)]].append(
            RankedDoc(
                int(rank),
                str(doc_id),
                None if grade is None else int(grade),
                None if source is None else str(source),
                None if labeller is None else str(labeller),
            )
        )
    return found
