"""The pool of chosen runs at a depth, its holes, and judged@k per run.

Scope: pooling works on the **evaluation set**, the queries that have at least one effective label
at the level (the queries trec_eval would evaluate). `all_queries=True` adds every query of the
chosen runs, for a collection that starts with no labels at all.

judged@k of a run = mean over the scope's queries of (labelled docs among the run's top min(k,
returned)) / min(k, returned); a scope query the run does not rank counts 0. It is computed from
integer counts as an exact fraction (`exact_judged`), the number the gate decides on. A **hole**
is a pooled (qid, doc_id) pair with no effective label.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from judgepool.defaults import DEPTH, LEVEL, Level
from judgepool.errors import Param, UsageError, remedy
from judgepool.pooling.rankings import doc_texts_sql, rankings_sql, run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import check_level, labelled_pairs_sql, labelled_queries_sql

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True, kw_only=True)
class PoolSpec:
    """Which pool: the top `depth` of `runs` (empty: every run) at `level`, counting human labels
    and `labeller`'s judge labels (None: any judge's), over the evaluation set or, with
    `all_queries`, every query of the runs. Checked when made; hashable, so a pool is a key."""

    depth: int = DEPTH
    runs: tuple[str, ...] = ()
    level: Level = LEVEL
    labeller: str | None = None
    all_queries: bool = False

    def __post_init__(self) -> None:
        check_depth(self.depth)
        check_level(self.level)
        names: Sequence[str] = self.runs
        # One name, or any sequence of them, is kept as a tuple (a spec is a key: hashable).
        object.__setattr__(self, "runs", (names,) if isinstance(names, str) else tuple(names))


@dataclass(frozen=True)
class RunPool:
    """One run's share of the pool; `judged` is `float(judged_exact)`."""

    run: str
    queries: int
    missing_queries: int
    judged: float
    holes: int
    judged_exact: Fraction = Fraction(0)


def exact_judged(counts: Iterable[tuple[int, int, int]], queries: int) -> Fraction:
    """judged@k exactly: the mean over `queries` queries of labelled / shown.

    `counts` holds (labelled, shown, number of queries with these two counts); a query that is
    not in it (the run returned nothing for it), or has shown = 0, counts 0. The one definition
    of the number the gate decides on (`metrics.gate`), for pools and evaluations alike.
    """
    if queries <= 0:
        return Fraction(0)
    total = sum(
        (Fraction(int(n) * int(lab), int(shown)) for lab, shown, n in counts if shown), Fraction(0)
    )
    return total / queries


@dataclass(frozen=True)
class PoolSummary:
    """The pool of the chosen runs at `depth`, and how much of it is labelled."""

    level: str
    depth: int
    labeller: str | None
    all_queries: bool
    runs: list[RunPool]
    scope_queries: int
    queries_without_labels: int
    pairs: int
    holes: int
    holes_without_text: int
    holes_without_query_text: int


@dataclass(frozen=True)
class Hole:
    """A pooled pair with no effective label; `runs` lists the runs that put it in their top-k."""

    qid: str
    doc_id: str
    best_rank: int
    runs: tuple[str, ...]
    has_text: bool
    has_query_text: bool


def check_depth(depth: int) -> int:
    """Depths are positive."""
    if depth < 1:
        raise UsageError(
            f"depth {depth} is not positive", remedy("use e.g. {}", Param("depth", 10)), value=depth
        )
    return depth


def _pool_ctes(store: Store, spec: PoolSpec) -> tuple[dict[str, int], str]:
    """The chosen runs (name -> run_key) and the pool's CTEs (`ranked`, `scope`, `candidates`,
    `lab`, `top`) that every pool query starts from."""
    level, labeller = spec.level, spec.labeller
    keys = run_keys(store, spec.runs)
    extra = "UNION SELECT DISTINCT qid FROM ranked" if spec.all_queries else ""
    return (
        keys,
        f"""
        WITH ranked AS ({rankings_sql(level, list(keys.values()), spec.depth)}),
        scope AS ({labelled_queries_sql(level, labeller)} {extra}),
        candidates AS (SELECT DISTINCT qid, doc_id FROM ranked),
        lab AS ({labelled_pairs_sql(level, labeller, among="candidates")}),
        top AS (SELECT r.run_key, r.qid, r.doc_id, r.rank, l.qid IS NOT NULL AS labelled
                FROM ranked r JOIN scope s ON s.qid = r.qid
                LEFT JOIN lab l ON l.qid = r.qid AND l.doc_id = r.doc_id)
    """,
    )


def pool_summary(store: Store, spec: PoolSpec | None = None) -> PoolSummary:
    """Per run: queries, judged@depth and holes; for the pool: pairs and holes."""
    spec = spec or PoolSpec()
    level = spec.level
    keys, ctes = _pool_ctes(store, spec)
    names = {v: k for k, v in keys.items()}
    with store.read() as con:
        # Per run, how many scope queries show `shown` docs of which `labelled` have a label.
        shares = con.execute(
            ctes
            + """
            SELECT run_key, labelled, shown, count(*) FROM (
                SELECT run_key, qid, count(*) FILTER (WHERE labelled) AS labelled,
                       count(*) AS shown
                FROM top GROUP BY run_key, qid)
            GROUP BY ALL"""
        ).fetchall()
        totals = con.execute(
            ctes
            + f""",
            pooled AS (SELECT qid, doc_id, bool_or(labelled) AS labelled FROM top GROUP BY ALL),
            texts AS ({doc_texts_sql(level)})
            SELECT (SELECT count(*) FROM scope),
                   (SELECT count(DISTINCT qid) FROM ranked
                    WHERE qid NOT IN (SELECT qid FROM scope)),
                   count(*), count(*) FILTER (WHERE NOT p.labelled),
                   count(*) FILTER (WHERE NOT p.labelled AND NOT coalesce(t.has_text, false)),
                   count(*) FILTER (WHERE NOT p.labelled AND q.qid IS NULL)
            FROM pooled p LEFT JOIN texts t ON t.doc_id = p.doc_id
            LEFT JOIN queries q ON q.qid = p.qid"""
        ).fetchone()
    scope, unlabelled, pairs, holes, no_text, no_query = totals or (0, 0, 0, 0, 0, 0)
    counts: dict[int, list[tuple[int, int, int]]] = {}
    for key, labelled, shown, n in shares:
        counts.setdefault(int(key), []).append((int(labelled), int(shown), int(n)))
    stats = []
    for key in keys.values():
        mine = counts.get(key, [])
        judged = exact_judged(mine, int(scope))
        stats.append(
            RunPool(
                run=names[key],
                queries=int(scope),
                missing_queries=int(scope) - sum(n for _, _, n in mine),
                judged=float(judged),
                holes=sum((shown - labelled) * n for labelled, shown, n in mine),
                judged_exact=judged,
            )
        )
    return PoolSummary(
        level=level,
        depth=spec.depth,
        labeller=spec.labeller,
        all_queries=spec.all_queries,
        runs=stats,
        scope_queries=int(scope),
        queries_without_labels=int(unlabelled),
        pairs=int(pairs),
        holes=int(holes),
        holes_without_text=int(no_text),
        holes_without_query_text=int(no_query),
    )


def holes_table(store: Store, spec: PoolSpec | None = None) -> pa.Table:
    """The holes as an Arrow table (qid, doc_id, best_rank, runs, has_text, has_query_text),
    ordered by qid, best rank, doc id: the columnar form, for listing many holes quickly.

    The pooled pairs are grouped first (best rank, runs) and the labels then looked up for
    those pairs alone, one semi join on (qid, doc_id); a run lists a pair once (ingest refuses
    a pair listed twice), so a pair's runs need no DISTINCT, only a sort of its few names.
    """
    spec = spec or PoolSpec()
    level = spec.level
    keys = run_keys(store, spec.runs)
    extra = "UNION SELECT DISTINCT qid FROM ranked" if spec.all_queries else ""
    with store.read() as con:
        return con.sql(
            f"""
            WITH ranked AS ({rankings_sql(level, list(keys.values()), spec.depth)}),
            scope AS ({labelled_queries_sql(level, spec.labeller)} {extra}),
            pooled AS (SELECT r.qid, r.doc_id, min(r.rank)::INTEGER AS best_rank,
                              list_sort(list(n.name)) AS runs
                       FROM ranked r JOIN runs n ON n.run_key = r.run_key
                       SEMI JOIN scope s ON s.qid = r.qid
                       GROUP BY r.qid, r.doc_id),
            lab AS ({labelled_pairs_sql(level, spec.labeller, among="pooled")}),
            texts AS ({doc_texts_sql(level)})
            SELECT h.qid, h.doc_id, h.best_rank, h.runs,
                   coalesce(t.has_text, false) AS has_text, q.qid IS NOT NULL AS has_query_text
            FROM pooled h ANTI JOIN lab l ON l.qid = h.qid AND l.doc_id = h.doc_id
            LEFT JOIN texts t ON t.doc_id = h.doc_id
            LEFT JOIN queries q ON q.qid = h.qid
            ORDER BY h.qid, h.best_rank, h.doc_id"""
        ).to_arrow_table()


def list_holes(store: Store, spec: PoolSpec | None = None) -> list[Hole]:
    """The holes of the pool, ordered by qid, then best rank, then doc id."""
    table = holes_table(store, spec)
    columns = [table.column(name).to_pylist() for name in Hole.__dataclass_fields__]
    return [
        Hole(qid, doc_id, best_rank, tuple(names), has_text, has_query_text)
        for qid, doc_id, best_rank, names, has_text, has_query_text in zip(*columns, strict=True)
    ]


def pool_queries(store: Store, spec: PoolSpec | None = None) -> list[str]:
    """The queries of the pool (in its scope and ranked by a chosen run), sorted: what a judge
    run's canaries are drawn from (the same set before and after its holes are filled)."""
    _, ctes = _pool_ctes(store, spec or PoolSpec())
    with store.read() as con:
        rows = con.execute(ctes + " SELECT DISTINCT qid FROM top ORDER BY qid").fetchall()
    return [str(r[0]) for r in rows]
