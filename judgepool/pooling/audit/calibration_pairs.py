"""Calibration in the database: the pooled pairs people labelled, a seeded sample of them
stratified by human grade, the judge's calibration labels of those pairs, and the recorded runs.

The **population** is every pair that some run ranks in its top `depth` at the level and that
has an ok human label of grade 0-3 (its latest one; pairs whose human grade is outside 0-3 are
counted and left out). The **sample** draws, with `random.Random(seed)`, the same number of pairs
from each grade present (`size` split evenly; a grade with fewer pairs gives all it has and the
rest goes to the others), so that rare grades are measured too; metrics/calibration.py
re-weights to the population's mix. A calibration run's labels are judgments with purpose
`calibration`: they never become effective labels.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from judgepool.errors import Call, Param, Placeholder, UsageError, remedy
from judgepool.pooling.pool import check_depth
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level, latest_labels_sql, quote
from judgepool.pooling.store.sql import registered

GRADES: tuple[int, ...] = (0, 1, 2, 3)


@dataclass(frozen=True)
class HumanPair:
    """A pooled pair with its human grade."""

    qid: str
    doc_id: str
    grade: int


@dataclass(frozen=True)
class Population:
    """The pooled human-labelled pairs, by grade, and how many were left out (grade not 0-3)."""

    pairs: list[HumanPair]
    excluded: int

    def counts(self) -> list[int]:
        return [sum(1 for p in self.pairs if p.grade == g) for g in GRADES]


@dataclass(frozen=True)
class CalibrationLabel:
    """The latest calibration label of a sampled pair by the judge (status not always ok)."""

    qid: str
    doc_id: str
    status: str
    grade: int | None
    cost: float | None


@dataclass(frozen=True)
class CalibrationRun:
    """One recorded `judgepool calibrate`."""

    id: int
    created_at: str
    level: str
    depth: int
    labeller: str
    model: str
    prompt_hash: str | None
    seed: int
    sample_size: int
    pairs: int
    label_mark: int
    figures: dict[str, Any]


def population(store: Store, depth: int = 10, level: str = "chunk") -> Population:
    """Every pair in the pool of all runs at `depth` with an ok human label (see the docstring)."""
    level = check_level(level)
    check_depth(depth)
    keys = list(run_keys(store).values())
    if not keys:
        raise UsageError(
            "no runs to pool",
            remedy("ingest a run first: `{}`", Call.of("ingest_run", Placeholder("FILE"))),
        )
    human = latest_labels_sql(level, "human")
    with store.read() as con:
        rows = con.execute(
            f"""SELECT h.qid, h.doc_id, h.grade FROM ({human}) h
                JOIN (SELECT DISTINCT qid, doc_id FROM ({rankings_sql(level, keys, depth)})) p
                  ON p.qid = h.qid AND p.doc_id = h.doc_id
                ORDER BY h.qid, h.doc_id"""
        ).fetchall()
    kept = [HumanPair(str(q), str(d), int(g)) for q, d, g in rows if int(g) in GRADES]
    return Population(kept, len(rows) - len(kept))


def stratified_sample(pairs: Sequence[HumanPair], size: int, seed: int) -> list[HumanPair]:
    """`size` pairs, as evenly split between the grades present as their numbers allow, drawn
    with `seed`; shuffled, so nobody sees them grouped by grade."""
    if size < 1:
        raise UsageError(
            remedy("{} is not positive", Param("sample", size)),
            remedy("ask for e.g. {} pairs", Param("sample", 200)),
            value=size,
        )
    by_grade: dict[int, list[HumanPair]] = {}
    for pair in sorted(pairs, key=lambda p: (p.grade, p.qid, p.doc_id)):
        by_grade.setdefault(pair.grade, []).append(pair)
    quota = dict.fromkeys(by_grade, 0)
    left = min(size, len(pairs))
    while left > 0:  # one more to each grade with room, lowest grades first, until all placed
        room = [g for g in sorted(by_grade) if quota[g] < len(by_grade[g])]
        for grade in room[:left]:
            quota[grade] += 1
        left -= len(room[:left])
    rng = random.Random(seed)
    drawn = [p for g in sorted(by_grade) for p in rng.sample(by_grade[g], quota[g])]
    rng.shuffle(drawn)
    return drawn


def calibration_labels(
    store: Store, pairs: Sequence[HumanPair], level: str, labeller: str, since_id: int
) -> dict[tuple[str, str], CalibrationLabel]:
    """The latest calibration label of `labeller` of each pair written after `since_id`."""
    import pyarrow as pa

    wanted = pa.table(
        {
            "qid": pa.array([p.qid for p in pairs], pa.string()),
            "doc_id": pa.array([p.doc_id for p in pairs], pa.string()),
        }
    )
    with store.read() as con, registered(con, "_calibrated", wanted):
        rows = con.execute(
            f"""SELECT j.qid, j.doc_id, max_by(j.status, j.id), max_by(j.grade, j.id),
                       max_by(j.cost, j.id)
                FROM judgments j JOIN _calibrated w ON w.qid = j.qid AND w.doc_id = j.doc_id
                WHERE j.level = {quote(check_level(level))} AND j.purpose = 'calibration'
                  AND j.labeller = ? AND j.id > ?
                GROUP BY j.qid, j.doc_id""",
            [labeller, since_id],
        ).fetchall()
    return {
        (str(q), str(d)): CalibrationLabel(str(q), str(d), str(s), None if g is None else int(g), c)
        for q, d, s, g, c in rows
    }


def record_run(store: Store, run: CalibrationRun) -> int:
    """Store a calibration run; returns its id."""
    with store.write() as con:
        row = con.execute(
            "INSERT INTO calibration_runs (created_at, level, depth, labeller, model, "
            "prompt_hash, seed, sample_size, pairs, label_mark, figures) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                utcnow(),
                run.level,
                run.depth,
                run.labeller,
                run.model,
                run.prompt_hash,
                run.seed,
                run.sample_size,
                run.pairs,
                run.label_mark,
                json.dumps(run.figures),
            ],
        ).fetchone()
    if row is None:  # pragma: no cover - INSERT ... RETURNING returns the row
        raise UsageError("the calibration run was not recorded", "run the command again")
    return int(row[0])


def _stamp(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else str(value)


def calibration_runs(
    store: Store, level: str | None = None, labeller: str | None = None
) -> list[CalibrationRun]:
    """Recorded calibration runs, newest first (of one level and judge when given)."""
    clauses: list[str] = []
    params: list[str] = []
    if level is not None:
        clauses.append("level = ?")
        params.append(check_level(level))
    if labeller is not None:
        clauses.append("labeller = ?")
        params.append(labeller)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    with store.read() as con:
        rows = con.execute(
            "SELECT id, created_at, level, depth, labeller, model, prompt_hash, seed, "
            f"sample_size, pairs, label_mark, figures FROM calibration_runs {where} "
            "ORDER BY id DESC",
            params,
        ).fetchall()
    return [
        CalibrationRun(
            int(r[0]),
            _stamp(r[1]),
            str(r[2]),
            int(r[3]),
            str(r[4]),
            str(r[5]),
            r[6],
            int(r[7]),
            int(r[8]),
            int(r[9]),
            int(r[10]),
            json.loads(r[11]),
        )
        for r in rows
    ]
