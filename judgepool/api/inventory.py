"""What is in a database, read-only: runs, queries, counts, labels, query groups, who is writing.

`judgepool runs | queries | status` print these lists, `jp.Database` hands them out as polars
DataFrames (the `*_frame` functions), and the dashboard reads them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgepool.api.store import Store
from judgepool.defaults import LEVEL, Level
from judgepool.pooling.store import inventory
from judgepool.pooling.store.activity import Activity
from judgepool.pooling.store.inventory import QueryInfo, RunInfo

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "Activity",
    "QueryInfo",
    "RunInfo",
    "activity",
    "default_level",
    "labels",
    "queries",
    "queries_frame",
    "query_groups",
    "runs",
    "runs_frame",
    "status",
]


def runs(store: Store) -> list[RunInfo]:
    """Every run, by name: rows, queries, format, the file it came from, when."""
    return inventory.list_runs(store)


def runs_frame(found: list[RunInfo]) -> pl.DataFrame:
    """The runs as a DataFrame: name, rows, queries, format, source_file, ingested_at."""
    import polars as pl

    return pl.DataFrame(
        [vars(r) for r in found],
        schema={
            "name": pl.String,
            "rows": pl.Int64,
            "queries": pl.Int64,
            "format": pl.String,
            "source_file": pl.String,
            "ingested_at": pl.String,
        },
        orient="row",
    )


def queries(store: Store) -> list[QueryInfo]:
    """Every query known from a topics file, a run or a label, by qid: its text (None when no
    topics file gave one), how many runs rank it, its human and judge labels."""
    return inventory.list_queries(store)


def queries_frame(found: list[QueryInfo]) -> pl.DataFrame:
    """The queries as a DataFrame: qid, text, runs, human_labels, judge_labels."""
    import polars as pl

    return pl.DataFrame(
        [vars(q) for q in found],
        schema={
            "qid": pl.String,
            "text": pl.String,
            "runs": pl.Int64,
            "human_labels": pl.Int64,
            "judge_labels": pl.Int64,
        },
        orient="row",
    )


def status(store: Store) -> dict[str, Any]:
    """Counts of queries, docs, runs and labels (by level, source, labeller and status: `count`
    the labels that can count, `canary` and `calibration` a judge's checks), and the schema
    version."""
    return inventory.status_counts(store)


def labels(
    store: Store,
    *,
    level: Level = LEVEL,
    source: str | None = None,
    labeller: str | None = None,
    status: str | None = None,
    effective: bool = False,
) -> pl.DataFrame:
    """Labels at `level` with their provenance, oldest first; `effective=True` keeps the one
    label per pair that the measures use (`labeller` then names the judge whose labels count)."""
    import polars as pl

    from judgepool.pooling.store.labels_frame import label_table

    table = label_table(store, level, source, labeller, status, effective)
    frame = pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table always converts
        raise TypeError("the labels did not convert to a DataFrame")
    return frame


def query_groups(store: Store) -> pl.DataFrame:
    """Every query-group membership: qid, group."""
    import polars as pl

    from judgepool.pooling.store.query_groups import membership_rows

    return pl.DataFrame(
        membership_rows(store), schema={"qid": pl.String, "group": pl.String}, orient="row"
    )


def activity(store: Store) -> Activity:
    """Who is writing labels now: live judges (from their claims), open batches, and the age of
    the newest judge label. While `.writing`, every figure read is provisional."""
    from judgepool.pooling.store.activity import activity as read_activity

    return read_activity(store)


def default_level(store: Store) -> Level:
    """The level a command works at when none is chosen: chunk, unless the database has labels
    at the doc level only."""
    from judgepool.pooling.store.judgments import default_level as level_with_labels

    return level_with_labels(store)
