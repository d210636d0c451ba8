"""The dashboard's data: cached readers keyed by the database's version, safe next to a writer.

Concurrency design (DESIGN.md decision 6: one database, many readers). DuckDB lets one process
hold a database file for writing, and while it does, no other process can open the file at all.
judgepool never keeps the file open: every `Store.read()` / `Store.write()` opens it for one
short piece of work and closes it, and a process that finds the file locked retries with jittered
backoff (up to JUDGEPOOL_LOCK_TIMEOUT). `judgepool judge` writes each batch of labels (every
~0.5 s) in one short transaction, so a dashboard read waits for at most one such transaction
instead of failing. (A reader *without* the retry fails most reads next to such a writer:
47 of 69 in the measurement that led to this design.) Measured on TREC DL 2019 with the real
`judgepool judge` writing from another process (bench/bench_dashboard.py): 0 failed reads, the
longest wait for a read about 0.3 s; tests/test_dashboard_concurrency.py checks it with two
processes on every run.

On top of that, the dashboard reads as little and as rarely as it can:
- `db_state` reads a small fingerprint of the database (max and count of label ids, the
  newest ingest time and row count of runs, docs and queries) and who is writing labels now
  (live judges' claims, the newest judge label: pooling/store/activity.py) in one short read;
- every other reader is `st.cache_data`-cached with that fingerprint as an argument, so a rerun
  on an unchanged database reads nothing more, and a new label changes the key, so the figures
  are recomputed;
- each page's body is an `st.fragment` that reruns every few seconds (the sidebar's live
  refresh), so the figures follow a running `judgepool judge` without a click.

A writer that holds the file longer than the timeout (`judgepool ui` sets 10 s unless
JUDGEPOOL_LOCK_TIMEOUT says otherwise) is shown as a notice, with the figures of the last read
kept on screen from the cache; the next refresh tries again. No lock error reaches the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.metrics.agreement import Agreement
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.evaluate import EvaluationFigures
    from judgepool.pooling.audit.browse import (
        Facets,
        LabelFilter,
        LabelListing,
        PairDetail,
        RankedDoc,
    )
    from judgepool.pooling.pool import PoolSummary
    from judgepool.pooling.store.activity import Activity

Version = tuple[Any, ...]


def db_version(db: str) -> Version | None:
    """A fingerprint that changes whenever labels, runs, docs or queries change (None: no file)."""
    from judgepool.pooling.store.inventory import fingerprint

    store = Store(db)
    if not store.exists():
        return None
    return fingerprint(store)


def db_state(db: str) -> tuple[Version, Activity] | None:
    """The fingerprint and who is writing labels now, in one read (None: no file). Not cached:
    a claim can start or run out without any label changing."""
    from judgepool.pooling.store.activity import state

    store = Store(db)
    if not store.exists():
        return None
    return state(store)


@st.cache_data(show_spinner=False, max_entries=64)
def run_names(db: str, version: Version) -> list[str]:
    """Every run, by name."""
    from judgepool.pooling.rankings import run_keys

    return list(run_keys(Store(db)))


@st.cache_data(show_spinner=False, max_entries=64)
def default_level(db: str, version: Version) -> str:
    """The level to open on: the one that has labels (pooling.store.judgments.default_level)."""
    from judgepool.pooling.store.judgments import default_level as level

    return level(Store(db))


@st.cache_data(show_spinner=False, max_entries=64)
def judge_labellers(db: str, version: Version, level: str) -> list[str]:
    """The judges (source llm) that labelled at `level`, most labels first."""
    from judgepool.pooling.store.judgments import labellers

    return [name for source, name, _ in labellers(Store(db), level) if source == "judge"]


@st.cache_data(show_spinner=False, max_entries=64)
def evaluation(
    db: str, version: Version, level: str, labeller: str | None, k: int
) -> EvaluationFigures:
    """Every run's measures with intervals (metrics.evaluate)."""
    from judgepool.metrics.evaluate import evaluate
    from judgepool.metrics.spec import EvalSpec
    from judgepool.pooling.store.judgments import check_level

    return evaluate(Store(db), None, EvalSpec(level=check_level(level), labeller=labeller, k=k))


@st.cache_data(show_spinner=False, max_entries=64)
def pool(db: str, version: Version, level: str, labeller: str | None, depth: int) -> PoolSummary:
    """judged@depth and holes of every run (pooling.pool_summary)."""
    from judgepool.pooling.pool import PoolSpec, pool_summary
    from judgepool.pooling.store.judgments import check_level

    return pool_summary(
        Store(db), PoolSpec(depth=depth, level=check_level(level), labeller=labeller)
    )


@st.cache_data(show_spinner=False, max_entries=64)
def comparison(
    db: str,
    version: Version,
    baseline: str,
    candidates: tuple[str, ...],
    level: str,
    labeller: str | None,
    k: int,
    force: bool,
) -> ComparisonFigures:
    """Paired differences of the candidates from the baseline, behind the gate."""
    from judgepool.metrics.compare import compare
    from judgepool.metrics.spec import CompareSpec
    from judgepool.pooling.store.judgments import check_level

    spec = CompareSpec(level=check_level(level), labeller=labeller, k=k, force=force)
    return compare(Store(db), baseline, candidates, spec)


@st.cache_data(show_spinner=False, max_entries=64)
def rankings(
    db: str,
    version: Version,
    runs: tuple[str, ...],
    qid: str,
    level: str,
    labeller: str | None,
    depth: int,
) -> dict[str, list[RankedDoc]]:
    """Each run's top `depth` for one query, with labels and their source."""
    from judgepool.pooling.audit.browse import ranked_with_labels

    return ranked_with_labels(Store(db), runs, qid, level, labeller, depth)


@st.cache_data(show_spinner=False, max_entries=64)
def query_texts(db: str, version: Version) -> dict[str, str]:
    """qid -> text of every query with a text."""
    from judgepool.pooling.store.inventory import all_query_texts

    return all_query_texts(Store(db))


@st.cache_data(show_spinner=False, max_entries=64)
def facets(db: str, version: Version, level: str) -> Facets:
    """The values the audit filters can take."""
    from judgepool.pooling.audit.browse import facets as read_facets

    return read_facets(Store(db), level)


@st.cache_data(show_spinner=False, max_entries=64)
def labels(
    db: str, version: Version, flt: LabelFilter, labeller: str | None, limit: int
) -> LabelListing:
    """Labels matching a filter, newest first."""
    from judgepool.pooling.audit.browse import list_labels

    return list_labels(Store(db), flt, labeller, limit)


@st.cache_data(show_spinner=False, max_entries=64)
def pair(
    db: str, version: Version, qid: str, doc_id: str, level: str, labeller: str | None
) -> PairDetail:
    """One pair with texts, ranks and every label."""
    from judgepool.pooling.audit.browse import pair_detail

    return pair_detail(Store(db), qid, doc_id, level, labeller)


@st.cache_data(show_spinner=False, max_entries=64)
def agreement(db: str, version: Version, level: str, labeller: str | None) -> Agreement:
    """Judge-vs-human agreement statistics."""
    from judgepool.metrics.agreement import agreement as compute

    return compute(Store(db), level, labeller)


@st.cache_data(show_spinner=False, max_entries=64)
def audited(
    db: str, version: Version, pairs: tuple[tuple[str, str], ...], level: str
) -> set[tuple[str, str]]:
    """Which sampled pairs have a human label now."""
    from judgepool.pooling.audit.browse import human_labelled

    return human_labelled(Store(db), pairs, level)


@st.cache_data(show_spinner=False, max_entries=64)
def export(
    db: str, version: Version, level: str, source: str, labeller: str | None, fmt: str
) -> bytes:
    """The exported labels, exactly as `judgepool export qrels` writes them."""
    from judgepool.pooling.export import export_labels

    return export_labels(Store(db), level, source, labeller, fmt)


@st.cache_data(show_spinner=False, max_entries=64)
def relabelled(
    db: str, version: Version, runs: tuple[str, ...], level: str, k: int, since_id: int
) -> dict[str, set[str]]:
    """Per run, the queries where a label written after id `since_id` is in its top k."""
    from judgepool.pooling.labels_in_top import relabelled_in_top

    return relabelled_in_top(Store(db), runs, level, k, since_id)
