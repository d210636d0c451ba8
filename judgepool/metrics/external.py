"""Measures computed by ir-measures: every measure but judgepool's four (metrics/measures.py).

They see exactly what the native measures see: the effective labels of the evaluation set at the
level, and each run's ranking at the level in trec_eval's order. The order is handed over as a
score of -rank, so no provider re-sorts ties its own way (ir-measures' providers disagree on
ties: its issue #18). The query-set policy is judgepool's, not the provider's: a run that returns
nothing for an evaluation-set query scores the measure's default (0) there, and the caller leaves
out the queries without a doc at the measure's relevance level, as for every measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgepool.metrics.measures import Measure
from judgepool.pooling.evaluation_rows import effective_label_rows, ranking_rows
from judgepool.pooling.store.connection import Store

Qrels = dict[str, dict[str, int]]
Ranking = dict[str, dict[str, float]]  # qid -> doc_id -> score (-rank)


@dataclass(frozen=True)
class ExternalData:
    """The labels and rankings ir-measures is given, for the evaluation set `qids`."""

    qids: tuple[str, ...]
    qrels: Qrels
    rankings: dict[str, Ranking]  # run -> its ranking
    depth: int | None


def needed_depth(measures: Sequence[Measure]) -> int | None:
    """How deep the rankings must be read for these measures (None: whole rankings)."""
    depths = [m.depth for m in measures]
    if any(d is None for d in depths):
        return None
    return max(d for d in depths if d is not None)


def load_external(
    store: Store,
    level: str,
    labeller: str | None,
    keys: dict[str, int],
    qids: tuple[str, ...],
    depth: int | None,
    view: str = "effective",
) -> ExternalData:
    """Read the evaluation set's labels (`view`: effective, or the judge's) and the runs'
    rankings (cut at `depth`) as dicts."""
    wanted = set(qids)
    labels = effective_label_rows(store, level, labeller, view)
    qrels: Qrels = {}
    for qid, doc_id, grade in zip(labels["qid"], labels["doc_id"], labels["grade"], strict=True):
        if qid in wanted:
            qrels.setdefault(str(qid), {})[str(doc_id)] = int(grade)
    names = {key: name for name, key in keys.items()}
    rows = ranking_rows(store, level, list(keys.values()), depth)
    rankings: dict[str, Ranking] = {name: {} for name in keys}
    for key, qid, doc_id, rank in zip(
        rows["run_key"], rows["qid"], rows["doc_id"], rows["rank"], strict=True
    ):
        if qid in wanted:
            rankings[names[int(key)]].setdefault(str(qid), {})[str(doc_id)] = -float(rank)
    return ExternalData(qids, qrels, rankings, depth)


def provider_name(measure: Measure) -> str:
    """The ir-measures provider that computes `measure` here (the first available that can)."""
    import ir_measures

    irm = measure.to_ir_measures()
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.is_available() and provider.supports(irm):
            return str(provider.NAME)
    return "none"


def external_values(
    measures: Sequence[Measure],
    data: ExternalData,
    runs: Sequence[str],
    qrels: Qrels | None = None,
) -> dict[str, NDArray[np.float64]]:
    """measure name -> (runs, queries) values by ir-measures, the measure's default (0) where a
    run returned nothing for the query. `qrels` replaces the data's labels (for the bounds)."""
    import ir_measures

    if not measures:
        return {}
    given = data.qrels if qrels is None else qrels
    objects = {str(m): m.to_ir_measures() for m in measures}
    index = {qid: i for i, qid in enumerate(data.qids)}
    out: dict[str, NDArray[np.float64]] = {}
    for name, irm in objects.items():
        default = float(getattr(irm, "DEFAULT", 0.0))
        out[name] = np.full((len(runs), len(data.qids)), default)
    lookup = {str(irm): name for name, irm in objects.items()}
    for row, run in enumerate(runs):
        ranking = data.rankings.get(run, {})
        if not ranking:
            continue
        for metric in ir_measures.iter_calc(list(objects.values()), given, ranking):
            at = index.get(str(metric.query_id))
            found = lookup.get(str(metric.measure))
            if at is not None and found is not None:
                out[found][row, at] = float(metric.value)
    return out


def with_holes_as(
    data: ExternalData, run: str, grade: int, depth: int | None
) -> tuple[Qrels, NDArray[np.int64]]:
    """The labels with every unlabelled doc of `run`'s top `depth` given `grade`, and how many
    docs that added per query (for the queries-with-a-value mask)."""
    filled: Qrels = {qid: dict(docs) for qid, docs in data.qrels.items()}
    added = np.zeros(len(data.qids), dtype=np.int64)
    for i, qid in enumerate(data.qids):
        docs = data.rankings.get(run, {}).get(qid, {})
        ranked = sorted(docs.items(), key=lambda item: -item[1])
        if depth is not None:
            ranked = ranked[:depth]
        labelled = filled.setdefault(qid, {})
        for doc_id, _ in ranked:
            if doc_id not in labelled:
                labelled[doc_id] = grade
                added[i] += 1
    return filled, added
