"""Real data: the TREC DL 2019 passage runs' judged@10 equals the published STATS.tsv figures."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import default_run_name, ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.pool import PoolSpec, pool_summary
from judgepool.pooling.store.connection import Store

pytestmark = pytest.mark.shared


@pytest.mark.slow
def test_dl19_judged_at_10_matches_stats(shared_data: Path) -> None:
    dl = shared_data / "trec-dl"
    store = Store()
    ingest_queries(store, dl / "topics" / "topics.dl19-passage.txt")
    ingest_docs(store, dl / "passages" / "msmarco-v1-passages.dl19-dl20-runs.jsonl")
    ingest_qrels(store, dl / "qrels" / "qrels.dl19-passage.txt")
    runs = sorted((dl / "runs" / "dl19").glob("*.trec"))
    assert len(runs) == 6
    for path in runs:
        ingest_run(store, path, name=default_run_name(path))  # the stem, as STATS.tsv names it
    with (dl / "STATS.tsv").open() as fh:
        stats = {
            default_run_name(Path(row["run"])): row
            for row in csv.DictReader(fh, delimiter="\t")
            if row["year"] == "dl19"
        }
    summary = pool_summary(store, PoolSpec(depth=10))
    assert summary.scope_queries == 43
    assert {r.run for r in summary.runs} == set(stats)
    for run in summary.runs:
        expected = stats[run.run]
        assert run.queries - run.missing_queries == int(expected["queries_evaluated"])
        assert round(run.judged, 3) == pytest.approx(float(expected["frac_judged"]), abs=1e-12)
        # judged@10 is a mean of per-query fractions over 10 docs each: holes = (1 - judged) * 430
        assert run.holes == round((1 - run.judged) * int(expected["top10_entries"]))
    assert summary.holes_without_text == 0 and summary.holes_without_query_text == 0
