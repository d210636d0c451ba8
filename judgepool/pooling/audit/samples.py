"""Audit samples: queries drawn uniformly at random from the evaluation set for a person to label,
and which of them are audited now.

A sample is the first n queries of a seeded random order of the evaluation set (its queries in
qid order, shuffled by Python's `random.Random(seed)`), so each query is in it with probability
n / N, and with the same seed a larger n extends the sample (the first n stay). The draw is
recorded (`audit_samples`, `audit_sample_queries`) with its seed, N and inclusion probability;
the latest sample of a level is the one in use. What a person must label for a sampled query
are its **judge-labelled pairs in the pool**: the pairs some run (of the sample's runs, or any)
ranks in its top `depth` that have an ok judge label (of the sample's labeller, or any judge).
A query is **audited** when every such pair has an ok human label.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.pooling.pool import check_depth
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import check_level, labelled_queries_sql, latest_labels_sql
from judgepool.pooling.store.sql import registered
from judgepool.pooling.store.texts import doc_texts, query_texts, retrieved_chunks


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
    inclusion_probability: float
    qids: tuple[str, ...]  # in draw order


@dataclass(frozen=True)
class Drawn:
    """What `draw_sample` did: the sample in use, and whether it wrote a new one (and why)."""

    sample: AuditSample
    written: bool
    note: str


@dataclass(frozen=True)
class PairToAudit:
    """A judge-labelled pair of a sampled query in the pool, with its human label if any."""

    qid: str
    doc_id: str
    best_rank: int
    judge_grade: int
    judge_labeller: str
    human_grade: int | None


@dataclass(frozen=True)
class QueryProgress:
    """One sampled query: its judge-labelled pairs and how many have a human label."""

    qid: str
    pairs: int
    labelled: int

    @property
    def audited(self) -> bool:
        return self.labelled == self.pairs


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
            "inclusion_probability FROM audit_samples WHERE level = ? ORDER BY id DESC LIMIT 1",
            [check_level(level)],
        ).fetchone()
        if row is None:
            return None
        qids = con.execute(
            "SELECT qid FROM audit_sample_queries WHERE sample_id = ? ORDER BY position",
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
    )


def _write(store: Store, s: AuditSample) -> AuditSample:
    with store.write() as con:
        row = con.execute(
            "INSERT INTO audit_samples (created_at, level, depth, runs, labeller, seed, "
            "evaluation_set, inclusion_probability) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
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
            ],
        ).fetchone()
        if row is None:  # pragma: no cover - INSERT ... RETURNING returns the row
            raise UsageError("the audit sample was not recorded", "run the command again")
        con.executemany(
            "INSERT INTO audit_sample_queries VALUES (?, ?, ?)",
            [(int(row[0]), i, q) for i, q in enumerate(s.qids)],
        )
    return AuditSample(
        int(row[0]),
        _stamp(row[1]),
        s.level,
        s.depth,
        s.runs,
        s.labeller,
        s.seed,
        s.evaluation_set,
        s.inclusion_probability,
        s.qids,
    )


def draw_sample(
    store: Store,
    queries: int,
    seed: int,
    depth: int = 10,
    runs: Sequence[str] = (),
    level: str = "chunk",
    labeller: str | None = None,
    replace: bool = False,
) -> Drawn:
    """Draw `queries` queries uniformly at random from the evaluation set and record the draw.

    The same draw again changes nothing; the same seed with another size or other listing
    options records the resized draw (the first queries stay); another seed, or an evaluation
    set that changed since, is refused unless `replace` (a new draw would not keep the queries
    already audited in it).
    """
    level = check_level(level)
    check_depth(depth)
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
        tuple(seeded_order(found, seed)[:queries]),
    )
    if current is not None and not replace:
        if current.seed != seed or current.evaluation_set != size:
            why = (
                f"it was drawn with seed {current.seed}"
                if current.seed != seed
                else f"the evaluation set has {size} queries now, {current.evaluation_set} then"
            )
            raise UsageError(
                f"an audit sample of {len(current.qids)} queries exists at the {level} level "
                f"(#{current.id}, {current.created_at}) and {why}: a new draw would not keep "
                "the queries already audited in it",
                remedy(
                    "draw with the same seed ({}) to resize it, or pass {} to start a new sample "
                    "(labels already given stay)",
                    Param("seed", current.seed),
                    Param("replace"),
                ),
            )
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
        note = f"drew {queries} of {size} queries (seed {seed})"
    elif len(current.qids) != queries:
        note = (
            f"resized sample #{current.id} from {len(current.qids)} to {queries} queries (same "
            f"seed: the first {min(queries, len(current.qids))} are the same)"
        )
    else:
        note = f"the same {queries} queries, listed at depth {depth}"
    return Drawn(written, True, note)


def _sample_pairs_sql(
    store: Store, sample: AuditSample, depth: int | None = None, runs: Sequence[str] | None = None
) -> str:
    """(qid, doc_id, best_rank, judge_grade, judge_labeller, human_grade) of the judge-labelled
    pairs in the pool of the sampled queries (registered as `_sampled`)."""
    keys = list(run_keys(store, list(runs if runs is not None else sample.runs)).values())
    pool = rankings_sql(sample.level, keys, depth if depth is not None else sample.depth)
    judge = latest_labels_sql(sample.level, "judge", sample.labeller)
    human = latest_labels_sql(sample.level, "human")
    return f"""
        SELECT p.qid, p.doc_id, p.best_rank, j.grade AS judge_grade, w.labeller AS judge_labeller,
               h.grade AS human_grade
        FROM (SELECT r.qid, r.doc_id, min(r.rank) AS best_rank FROM ({pool}) r
              JOIN _sampled s ON s.qid = r.qid GROUP BY ALL) p
        JOIN ({judge}) j ON j.qid = p.qid AND j.doc_id = p.doc_id
        JOIN judgments w ON w.id = j.judgment_id
        LEFT JOIN ({human}) h ON h.qid = p.qid AND h.doc_id = p.doc_id"""


def _sampled(qids: Sequence[str]) -> Any:
    import pyarrow as pa

    return pa.table({"qid": pa.array(list(dict.fromkeys(qids)), pa.string())})


def pairs_to_audit(store: Store, sample: AuditSample) -> list[PairToAudit]:
    """Every judge-labelled pair of the sample's queries in its pool, in the sample's query
    order, then best rank, then doc id; `human_grade` None: still to label."""
    order = {q: i for i, q in enumerate(sample.qids)}
    with store.read() as con, registered(con, "_sampled", _sampled(sample.qids)):
        rows = con.execute(_sample_pairs_sql(store, sample)).fetchall()
    found = [
        PairToAudit(str(q), str(d), int(r), int(g), str(lab), None if h is None else int(h))
        for q, d, r, g, lab, h in rows
    ]
    found.sort(key=lambda p: (order[p.qid], p.best_rank, p.doc_id))
    return found


def progress(store: Store, sample: AuditSample) -> list[QueryProgress]:
    """Per sampled query (in draw order): judge-labelled pairs in the pool, and how many of them
    have a human label. A query with no such pair is audited already."""
    pairs = pairs_to_audit(store, sample)
    counts = {q: [0, 0] for q in sample.qids}
    for p in pairs:
        counts[p.qid][0] += 1
        counts[p.qid][1] += p.human_grade is not None
    return [QueryProgress(q, n, done) for q, (n, done) in counts.items()]


def audited_queries(
    store: Store,
    qids: Sequence[str],
    level: str,
    labeller: str | None,
    runs: Sequence[str],
    depth: int,
) -> set[str]:
    """Which of `qids` are audited for these runs: every pair of theirs that the runs rank in
    their top `depth` and that has an ok judge label (of `labeller`, when named) has an ok human
    label too (a query with no such pair counts as audited)."""
    if not qids:
        return set()
    probe = AuditSample(
        0, "", check_level(level), depth, tuple(runs), labeller, 0, 0, 0.0, tuple(qids)
    )
    with store.read() as con, registered(con, "_sampled", _sampled(qids)):
        open_queries = {
            str(q)
            for (q,) in con.execute(
                f"SELECT DISTINCT qid FROM ({_sample_pairs_sql(store, probe, depth, runs)}) "
                "WHERE human_grade IS NULL"
            ).fetchall()
        }
    return set(qids) - open_queries


#: Between two chunks of one document in a listing (as the judge is shown them).
CHUNK_GAP = "\n[...]\n"


def texts_of(
    store: Store, sample: AuditSample, pairs: Sequence[PairToAudit], max_chunks: int = 3
) -> tuple[dict[str, str], dict[tuple[str, str], str | None]]:
    """(qid -> query text, (qid, doc_id) -> passage text) for listing pairs to a person: at the
    doc level, the document's chunks the runs retrieved for the query, best rank first (at
    most `max_chunks`), as a judge is shown them."""
    queries = query_texts(store, [p.qid for p in pairs])
    if sample.level == "chunk":
        texts = doc_texts(store, [p.doc_id for p in pairs])
        return queries, {(p.qid, p.doc_id): texts.get(p.doc_id) for p in pairs}
    keys = list(run_keys(store, list(sample.runs)).values())
    found = retrieved_chunks(store, keys, [(p.qid, p.doc_id) for p in pairs])
    passages: dict[tuple[str, str], str | None] = {}
    for p in pairs:
        chunks = [c.text for c in found.get((p.qid, p.doc_id), []) if c.text and c.text.strip()]
        passages[p.qid, p.doc_id] = CHUNK_GAP.join(chunks[:max_chunks]) if chunks else None
    return queries, passages
