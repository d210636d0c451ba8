"""The audit verbs: draw queries at random for a person to audit, list what they must label, and
follow the progress, as `jp.Database.audit_sample / audit_pairs / audit_status` and
`judgepool audit sample | status` (and the dashboard's Audit queue) do it.

    drawn = sample(store, 15, seed=1, level="doc")   # recorded; the same seed, more: extended
    listing = pairs(store, level="doc")              # what a person must label, with texts
    found = status(store, level="doc")               # queries audited, pairs labelled / left

The database side is pooling/audit/samples.py; judge-corrected intervals built on the audited
queries are metrics/corrected.py's. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgepool.defaults import DEPTH, DESIGN, DRAW_SEED, LEVEL, Design, Level
from judgepool.pooling.audit.listing import QueryProgress
from judgepool.pooling.audit.samples import AuditSample
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "AuditDraw",
    "AuditSample",
    "AuditStatus",
    "ListedPair",
    "QueryProgress",
    "current_sample",
    "pairs",
    "pairs_frame",
    "sample",
    "status",
]


@dataclass(frozen=True)
class AuditStatus:
    """Progress of the audit sample in use."""

    sample: AuditSample
    queries: list[QueryProgress]

    @property
    def audited(self) -> int:
        return sum(q.audited for q in self.queries)

    @property
    def pairs(self) -> int:
        return sum(q.pairs for q in self.queries)

    @property
    def labelled(self) -> int:
        return sum(q.labelled for q in self.queries)


@dataclass(frozen=True)
class AuditDraw:
    """What a draw did: the sample in use, whether it wrote a new one (`note` says why), and
    what auditing it takes now (`status`)."""

    sample: AuditSample
    written: bool
    note: str
    status: AuditStatus


@dataclass(frozen=True)
class ListedPair:
    """A pair of the audit sample to show a person (the judge's grade is not in it: blind)."""

    qid: str
    doc_id: str
    query: str | None
    passage: str | None
    human_grade: int | None
    judge_grade: int = field(repr=False, default=-1)  # for the queue, revealed after grading


def sample(
    store: Store,
    queries: int,
    *,
    seed: int = DRAW_SEED,
    depth: int = DEPTH,
    runs: Sequence[str] = (),
    level: Level = LEVEL,
    labeller: str | None = None,
    replace: bool = False,
    design: Design = DESIGN,
) -> AuditDraw:
    """Draw `queries` queries from the evaluation set at `level` and record the draw (the same
    seed with more queries extends it; another seed or design needs `replace`). `design`:
    `uniform` (each query with probability n / N) or `weighted` (with probability rising with
    the judge's uncertainty about the query's figures for `runs` at `depth`, metrics/
    audit_design.py). What a person labels for a sampled query: every pair of it that a judge
    (`labeller`, or any) labelled; those `runs` rank in their top `depth` are listed first."""
    from judgepool.pooling.audit.listing import progress
    from judgepool.pooling.audit.samples import draw_sample

    scores = _scores(store, runs, level, labeller, depth) if design == "weighted" else None
    drawn = draw_sample(
        store, queries, seed, depth, tuple(runs), level, labeller, replace, design, scores
    )
    found = AuditStatus(drawn.sample, progress(store, drawn.sample))
    return AuditDraw(drawn.sample, drawn.written, drawn.note, found)


def _scores(
    store: Store, runs: Sequence[str], level: str, labeller: str | None, depth: int
) -> dict[str, float]:
    """qid -> the judge's uncertainty about the query's figures (metrics/audit_design.py): the
    default measures at `depth`, for the differences of every pair of `runs` (two or more), else
    for each run; the confusion model from the pairs a judge and a person both graded."""
    from itertools import combinations

    from judgepool.metrics.audit_design import confusion, load_view, observed_agreement
    from judgepool.metrics.audit_design import uncertainty as score
    from judgepool.metrics.measures import default_measures

    names, qids, view, _ = load_view(store, runs, level, labeller, depth)
    contrasts = list(combinations(range(len(names)), 2)) if len(runs) >= 2 else []
    matrix = confusion(observed_agreement(store, level, labeller))
    found = score(view, default_measures(depth), matrix, contrasts=contrasts)
    return {q: float(v) for q, v in zip(qids, found, strict=True)}


def current_sample(store: Store, level: Level = LEVEL) -> AuditSample:
    """The audit sample in use at `level`, or an error that says how to draw one."""
    from judgepool.errors import Call, UsageError, remedy
    from judgepool.pooling.audit.samples import latest_sample

    found = latest_sample(store, level)
    if found is None:
        raise UsageError(
            f"no audit sample at the {level} level yet",
            remedy("draw one: {}", Call.of("audit_sample", queries=15, level=level)),
        )
    return found


def pairs(store: Store, *, level: Level = LEVEL, everything: bool = False) -> list[ListedPair]:
    """The judge-labelled pairs of the audit sample's queries in its pool, with query and
    passage text, in the sample's order: those still without a human label (all of them with
    `everything`)."""
    from judgepool.pooling.audit.listing import pairs_to_audit, texts_of

    drawn = current_sample(store, level)
    found = [p for p in pairs_to_audit(store, drawn) if everything or p.human_grade is None]
    queries, passages = texts_of(store, drawn, found)
    return [
        ListedPair(
            p.qid,
            p.doc_id,
            queries.get(p.qid),
            passages.get((p.qid, p.doc_id)),
            p.human_grade,
            p.judge_grade,
        )
        for p in found
    ]


def pairs_frame(listed: Sequence[ListedPair]) -> pl.DataFrame:
    """The listing as a table: qid, doc_id, query, passage, human_grade (no judge grade)."""
    import polars as pl

    rows = [
        {
            "qid": p.qid,
            "doc_id": p.doc_id,
            "query": p.query,
            "passage": p.passage,
            "human_grade": p.human_grade,
        }
        for p in listed
    ]
    schema = {
        "qid": pl.String,
        "doc_id": pl.String,
        "query": pl.String,
        "passage": pl.String,
        "human_grade": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def status(store: Store, *, level: Level = LEVEL) -> AuditStatus:
    """Queries fully audited and pairs labelled / left, per query of the sample in use."""
    from judgepool.pooling.audit.listing import progress

    drawn = current_sample(store, level)
    return AuditStatus(drawn, progress(store, drawn))
