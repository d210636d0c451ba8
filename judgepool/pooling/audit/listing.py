"""What a person must label for an audit sample, and how far they are: every judge pair of the
sampled queries (pooling/audit/samples.py says why all of them), with the passage texts to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.pooling.audit.samples import AuditSample, sampled_table
from judgepool.pooling.rankings import rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import latest_labels_sql
from judgepool.pooling.store.sql import registered
from judgepool.pooling.store.texts import doc_texts, query_texts, retrieved_chunks


@dataclass(frozen=True)
class PairToAudit:
    """A judge-labelled pair of a sampled query in the pool, with its human label if any."""

    qid: str
    doc_id: str
    best_rank: int | None  # the best rank the sample's runs give it (None: not in their top)
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


def _sample_pairs_sql(store: Store, sample: AuditSample) -> str:
    """(qid, doc_id, best_rank, judge_grade, judge_labeller, human_grade) of every judge pair of
    the sampled queries (registered as `_sampled`): best_rank is the best rank the sample's runs
    (or any) give the pair within its depth, NULL when none ranks it there."""
    keys = list(run_keys(store, list(sample.runs)).values())
    pool = rankings_sql(sample.level, keys, sample.depth)
    judge = latest_labels_sql(sample.level, "judge", sample.labeller)
    human = latest_labels_sql(sample.level, "human")
    return f"""
        SELECT j.qid, j.doc_id, p.best_rank, j.grade AS judge_grade, w.labeller AS judge_labeller,
               h.grade AS human_grade
        FROM ({judge}) j
        JOIN _sampled s ON s.qid = j.qid
        JOIN judgments w ON w.id = j.judgment_id
        LEFT JOIN (SELECT r.qid, r.doc_id, min(r.rank) AS best_rank FROM ({pool}) r
                   JOIN _sampled s2 ON s2.qid = r.qid GROUP BY ALL) p
               ON p.qid = j.qid AND p.doc_id = j.doc_id
        LEFT JOIN ({human}) h ON h.qid = j.qid AND h.doc_id = j.doc_id"""


def pairs_to_audit(store: Store, sample: AuditSample) -> list[PairToAudit]:
    """Every judge pair of the sample's queries, in the sample's query order, then best rank
    (unranked ones last), then doc id; `human_grade` None: still to label."""
    order = {q: i for i, q in enumerate(sample.qids)}
    with store.read() as con, registered(con, "_sampled", sampled_table(sample.qids)):
        rows = con.execute(_sample_pairs_sql(store, sample)).fetchall()
    found = [
        PairToAudit(
            str(q),
            str(d),
            None if r is None else int(r),
            int(g),
            str(lab),
            None if h is None else int(h),
        )
        for q, d, r, g, lab, h in rows
    ]
    unranked = 1 << 62
    found.sort(key=lambda p: (order[p.qid], p.best_rank or unranked, p.doc_id))
    return found


def progress(store: Store, sample: AuditSample) -> list[QueryProgress]:
    """Per sampled query (in draw order): its judge pairs, and how many of them have a human
    label. A query with no judge pair is audited already."""
    pairs = pairs_to_audit(store, sample)
    counts = {q: [0, 0] for q in sample.qids}
    for p in pairs:
        counts[p.qid][0] += 1
        counts[p.qid][1] += p.human_grade is not None
    return [QueryProgress(q, n, done) for q, (n, done) in counts.items()]


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
