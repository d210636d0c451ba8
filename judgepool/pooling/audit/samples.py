"""Audit samples: queries drawn at random from the evaluation set for a person to label, and
which of them are audited now.

A sample is the first n queries of a seeded random order of the evaluation set, so with the same
seed a larger n extends it (the first n stay). Two designs give the order:
- `uniform`: the queries in qid order shuffled by Python's `random.Random(seed)`: each query is in
  the sample with probability n / N;
- `weighted` (pooling/audit/design.py): sequential Poisson sampling by an uncertainty score
  (metrics/audit_design.py computes it), each query with its own inclusion probability,
  recorded with its score for every query of the evaluation set (`audit_sample_frame`).
The draw is recorded (`audit_samples`, `audit_sample_queries`) with its design, seed, N and
inclusion probability (n / N; a weighted draw's per query in its frame); the latest sample of a
level is the one in use.

What a person must label for a sampled query are its **judge pairs**: every pair of the query
with an ok judge label (of the sample's labeller, or any judge). All of them, ranked or not:
nDCG's ideal ranking and the recall denominators read every label of the query, so a query whose
"human" value kept a single judge label would not be the human value (issue 21: with only the
compared runs' top 10 audited, the corrected R(rel=3)@10 converged to +0.174 against a truth of
+0.239). The sample's runs and depth only order the listing (the pairs they rank highest first).
A query is **audited** when every such pair has an ok human label.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from datetime import datetime
from typing import Any

from judgepool.defaults import DESIGN, DESIGNS, Design
from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.pooling.audit.design import inclusion_probabilities, weighted_order
from judgepool.pooling.pool import check_depth
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level, labelled_queries_sql, latest_labels_sql
from judgepool.pooling.store.sql import registered


@dataclass(frozen=True)
class AuditSample:
    """One recorded draw of queries to audit."""

    id: int
    created_at: str
    level: str
    depth: int
    runs: tuple[str, ...]  # () = every run
    labeller: str | None  # the judge whose labels are audited (None: any judge)
    seed: int
    evaluation_set: int  # N when drawn
    inclusion_probability: float  # n / N
    qids: tuple[str, ...]  # in draw order
    design: str = "uniform"
    # weighted: qid -> (score, inclusion probability) for every query of the evaluation set
    frame: Mapping[str, tuple[float, float]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Drawn:
    """What `draw_sample` did: the sample in use, and whether it wrote a new one (and why)."""

    sample: AuditSample
    written: bool
    note: str


def evaluation_set(store: Store, level: str, labeller: str | None = None) -> list[str]:
    """The queries with at least one effective label at `level`, in qid order."""
    with store.read() as con:
        rows = con.execute(
            f"SELECT qid FROM ({labelled_queries_sql(check_level(level), labeller)}) ORDER BY qid"
        ).fetchall()
    return [str(q) for (q,) in rows]


def seeded_order(qids: Sequence[str], seed: int) -> list[str]:
    """The queries (taken in qid order) in the random order that `seed` gives."""
    order = sorted(qids)
    random.Random(seed).shuffle(order)
    return order


def _stamp(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else str(value)


def latest_sample(store: Store, level: str) -> AuditSample | None:
    """The audit sample in use at `level` (the latest drawn), or None."""
    with store.read() as con:
        row = con.execute(
            "SELECT id, created_at, level, depth, runs, labeller, seed, evaluation_set, "
            "inclusion_probability, design FROM audit_samples WHERE level = ? "
            "ORDER BY id DESC LIMIT 1",
            [check_level(level)],
        ).fetchone()
        if row is None:
            return None
        qids = con.execute(
            "SELECT qid FROM audit_sample_queries WHERE sample_id = ? ORDER BY position",
            [row[0]],
        ).fetchall()
        frame = con.execute(
            "SELECT qid, score, probability FROM audit_sample_frame WHERE sample_id = ?",
            [row[0]],
        ).fetchall()
    return AuditSample(
        id=int(row[0]),
        created_at=_stamp(row[1]),
        level=str(row[2]),
        depth=int(row[3]),
        runs=tuple(json.loads(row[4])),
        labeller=None if row[5] is None else str(row[5]),
        seed=int(row[6]),
        evaluation_set=int(row[7]),
        inclusion_probability=float(row[8]),
        qids=tuple(str(q) for (q,) in qids),
        design=str(row[9]),
        frame={str(q): (float(sc), float(p)) for q, sc, p in frame},
    )


def _write(store: Store, s: AuditSample) -> AuditSample:
    with store.write() as con:
        row = con.execute(
            "INSERT INTO audit_samples (created_at, level, depth, runs, labeller, seed, "
            "evaluation_set, inclusion_probability, design) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "RETURNING id, created_at",
            [
                utcnow(),
                s.level,
                s.depth,
                json.dumps(list(s.runs)),
                s.labeller,
                s.seed,
                s.evaluation_set,
                s.inclusion_probability,
                s.design,
            ],
        ).fetchone()
        if row is None:  # pragma: no cover - INSERT ... RETURNING returns the row
            raise UsageError("the audit sample was not recorded", "run the command again")
        con.executemany(
            "INSERT INTO audit_sample_queries VALUES (?, ?, ?)",
            [(int(row[0]), i, q) for i, q in enumerate(s.qids)],
        )
        if s.frame:
            con.executemany(
                "INSERT INTO audit_sample_frame VALUES (?, ?, ?, ?)",
                [(int(row[0]), q, sc, p) for q, (sc, p) in sorted(s.frame.items())],
            )
    return replace_fields(s, id=int(row[0]), created_at=_stamp(row[1]))


def _order(
    found: Sequence[str],
    seed: int,
    design: str,
    scores: Mapping[str, float] | None,
    current: AuditSample | None,
) -> tuple[list[str], dict[str, float]]:
    """The draw order of `design` and the scores it came from (weighted: the current sample's
    when it is a weighted draw of the same seed and evaluation set, so that a resize extends it)."""
    if design == "uniform":
        return seeded_order(found, seed), {}
    reuse = (
        current is not None
        and current.design == "weighted"
        and current.seed == seed
        and set(current.frame) == set(found)
    )
    if reuse and current is not None:
        known = {q: sc for q, (sc, _) in current.frame.items()}
    elif scores is None or set(scores) != set(found):
        raise UsageError(
            "a weighted draw needs an uncertainty score for every query of the evaluation set",
            remedy("draw it through {}", Call.of("audit_sample", design="weighted")),
        )
    else:
        known = {q: float(scores[q]) for q in found}
    return weighted_order(list(found), [known[q] for q in found], seed), known


def draw_sample(
    store: Store,
    queries: int,
    seed: int,
    depth: int = 10,
    runs: Sequence[str] = (),
    level: str = "chunk",
    labeller: str | None = None,
    replace: bool = False,
    design: Design = DESIGN,
    scores: Mapping[str, float] | None = None,
) -> Drawn:
    """Draw `queries` queries from the evaluation set as `design` says and record the draw
    (`scores`: each query's uncertainty, for a weighted draw).

    The same draw again changes nothing; the same seed with another size or other listing
    options records the resized draw (the first queries stay); another seed or design, or an
    evaluation set that changed since, is refused unless `replace` (a new draw would not keep
    the queries already audited in it).
    """
    level = check_level(level)
    check_depth(depth)
    if design not in DESIGNS:
        raise UsageError(
            f"audit design {design!r} is not one of {', '.join(DESIGNS)}",
            remedy("use {}", Param("design", "weighted")),
            value=design,
        )
    chosen = tuple(run_keys(store, list(runs))) if runs else ()
    found = evaluation_set(store, level, labeller)
    size = len(found)
    if size == 0:
        raise UsageError(
            f"no query has an effective label at the {level} level: there is nothing to audit",
            remedy("ingest qrels or fill the holes with `{}` first", Call.of("judge")),
        )
    if queries < 1 or queries > size:
        raise UsageError(
            remedy("{}: the evaluation set has " + f"{size} queries", Param("queries", queries)),
            f"ask for 1 to {size} queries (10 to 20 is a usual audit)",
            value=queries,
        )
    current = latest_sample(store, level)
    if current is not None and not replace:
        changed = (current.seed, current.design, current.evaluation_set) != (seed, design, size)
        if changed:
            why = (
                f"it was drawn with seed {current.seed}"
                if current.seed != seed
                else f"it was drawn with the {current.design} design"
                if current.design != design
                else f"the evaluation set has {size} queries now, {current.evaluation_set} then"
            )
            raise UsageError(
                f"an audit sample of {len(current.qids)} queries exists at the {level} level "
                f"(#{current.id}, {current.created_at}) and {why}: a new draw would not keep "
                "the queries already audited in it",
                remedy(
                    "draw with the same seed ({}) and design to resize it, or pass {} to start a "
                    "new sample (labels already given stay)",
                    Param("seed", current.seed),
                    Param("replace"),
                ),
            )
    order, known = _order(found, seed, design, scores, current)
    if queries > len(order):
        raise UsageError(
            remedy(
                "{}: " + f"only {len(order)} queries have judge labels to audit",
                Param("queries", queries),
            ),
            f"ask for at most {len(order)} (the others' figures are known without an audit)",
            value=queries,
        )
    frame: dict[str, tuple[float, float]] = {}
    if design == "weighted":
        probs = inclusion_probabilities([known[q] for q in found], queries, seed)
        frame = {q: (known[q], float(p)) for q, p in zip(found, probs, strict=True)}
    drawn = AuditSample(
        0,
        "",
        level,
        depth,
        chosen,
        labeller,
        seed,
        size,
        queries / size,
        tuple(order[:queries]),
        design,
        frame,
    )
    if current is not None and not replace:
        same = (current.qids, current.depth, current.runs, current.labeller) == (
            drawn.qids,
            depth,
            chosen,
            labeller,
        )
        if same:
            return Drawn(current, False, f"the sample #{current.id} is already this draw")
    written = _write(store, drawn)
    if current is None or replace:
        how = "" if design == "uniform" else f"{design} design, "
        note = f"drew {queries} of {size} queries ({how}seed {seed})"
    elif len(current.qids) != queries:
        note = (
            f"resized sample #{current.id} from {len(current.qids)} to {queries} queries (same "
            f"seed: the first {min(queries, len(current.qids))} are the same)"
        )
    else:
        note = f"the same {queries} queries, listed at depth {depth}"
    return Drawn(written, True, note)


def sampled_table(qids: Sequence[str]) -> Any:
    import pyarrow as pa

    return pa.table({"qid": pa.array(list(dict.fromkeys(qids)), pa.string())})


def audited_queries(
    store: Store, qids: Sequence[str], level: str, labeller: str | None
) -> set[str]:
    """Which of `qids` are audited: every pair of theirs with an ok judge label (of `labeller`,
    when named) has an ok human label too, so that no label any of their measures reads is a
    judge's (a query with no judge label counts as audited)."""
    if not qids:
        return set()
    judge = latest_labels_sql(check_level(level), "judge", labeller)
    human = latest_labels_sql(level, "human")
    with store.read() as con, registered(con, "_sampled", sampled_table(qids)):
        open_queries = {
            str(q)
            for (q,) in con.execute(
                f"""SELECT DISTINCT j.qid FROM ({judge}) j JOIN _sampled s ON s.qid = j.qid
                    LEFT JOIN ({human}) h ON h.qid = j.qid AND h.doc_id = j.doc_id
                    WHERE h.grade IS NULL"""
            ).fetchall()
        }
    return set(qids) - open_queries
