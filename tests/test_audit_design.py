"""The weighted audit design (`audit sample --design weighted`, pooling/audit/design.py and
metrics/audit_design.py): the recorded inclusion probabilities are the draw's, queries where the
judge's errors would move the figures are drawn more often, the draw is recorded and extended
like a uniform one, and the corrected figures weigh each audited query by its probability.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from judgepool.metrics.audit_design import PRIOR, confusion, load_view, uncertainty
from judgepool.metrics.measures import default_measures
from judgepool.pooling.audit.design import inclusion_probabilities, sizes, weighted_order
from judgepool.pooling.audit.samples import latest_sample
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from tests.conftest import CliResult
from tests.dashboard_db import QIDS, build

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def test_recorded_probabilities_are_the_draws_frequencies() -> None:
    scores = np.array([0.0, 1.0, 1.0, 2.0, 4.0, 0.5, 3.0, 1.0])
    qids = [f"q{i}" for i in range(scores.size)]
    n = 3
    pi = inclusion_probabilities(scores, n, seed=0)
    assert pi[0] == 0.0  # a query with no judge label is never drawn
    assert pi.sum() == pytest.approx(n, abs=1e-9)
    hits = np.zeros(scores.size)
    draws = 4000
    for seed in range(draws):
        for q in weighted_order(qids, scores, seed)[:n]:
            hits[int(q[1:])] += 1
    assert np.abs(hits / draws - pi).max() < 0.03
    assert pi[4] > 2 * pi[5]  # the most uncertain query is drawn far more often
    # the first n of a larger draw are the smaller draw: resizing extends a sample
    assert weighted_order(qids, scores, 9)[:2] == weighted_order(qids, scores, 9)[:2]
    s = sizes(scores)
    assert s[0] == 0.0 and (s[1:] > 0.0).all()


def test_equal_scores_give_a_uniform_draw() -> None:
    pi = inclusion_probabilities(np.ones(10), 4, seed=1)
    assert np.allclose(pi, 0.4, atol=0.02)


def test_the_score_rises_where_more_of_the_figures_hang_on_the_judge(write: Writer) -> None:
    store = build(Store(), write)
    runs = ["base", "cand", "weak"]

    def scores() -> np.ndarray:
        _, qids, view, _ = load_view(store, runs, "chunk", None, 10)
        assert qids == QIDS
        found: np.ndarray = uncertainty(view, default_measures(10), confusion(), draws=400)
        return found

    before = scores()
    assert before.shape == (6,) and (before > 0).all()  # d10 of every query is the judge's
    # weak's holes d11-d14 of q2 get judge labels: more of q2's figures hang on the judge
    write_judgments(
        store,
        [
            Judgment(qid="q2", doc_id=f"q2-d{n}", grade=1, source="judge", labeller="j2")
            for n in (11, 12, 13, 14)
        ],
    )
    _, _, _, human = load_view(store, runs, "chunk", None, 10)
    assert np.isnan(human).sum() == 6 + 4  # the pairs no person labelled
    after = scores()
    q2 = QIDS.index("q2")
    assert after[q2] > 1.5 * before[q2]
    assert np.allclose(np.delete(after, q2), np.delete(before, q2), rtol=0.25)
    assert np.allclose(confusion(None, 1e9), PRIOR)


def test_a_weighted_sample_is_recorded_extended_and_weighs_the_corrected_figures(
    write: Writer, cli: Cli
) -> None:
    store = build(Store(), write)
    done = cli("audit", "sample", "--queries", "3", "--seed", "4", "--design", "weighted")
    assert done.code == 0, done.err
    assert "(weighted design, seed 4)" in done.out
    assert "weighted design, inclusion probabilities" in done.out
    sample = latest_sample(store, "chunk")
    assert sample is not None and sample.design == "weighted" and len(sample.qids) == 3
    assert set(sample.frame) == set(QIDS)
    pi = {q: p for q, (_, p) in sample.frame.items()}
    assert sum(pi.values()) == pytest.approx(3.0, abs=1e-9)
    # another design needs --replace; the same seed and design with more queries extends
    refused = cli("audit", "sample", "--queries", "3", "--seed", "4")
    assert refused.code != 0 and "weighted design" in refused.err
    grown = cli("audit", "sample", "--queries", "4", "--seed", "4", "--design", "weighted")
    assert grown.code == 0, grown.err
    bigger = latest_sample(store, "chunk")
    assert bigger is not None and bigger.qids[:3] == sample.qids
    # audit the four drawn queries (d10 is each query's only judge label without a person's)
    lines = "".join(f"{q} 0 {q}-d10 1\n" for q in bigger.qids)
    ingest_qrels(store, write("audit.txt", lines), labeller="ana")
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    assert report["audit"]["sample"]["design"] == "weighted"
    assert sorted(report["audit"]["audited"]) == sorted(bigger.qids)  # audited = drawn
    for c in report["comparisons"]:
        assert c["ppi"] is not None and c["ppi"]["audited"] == 4, c
        assert c["verdict"] in ("robust", "judge-biased", "too small to tell")
    table = cli("compare", "base", "cand").out
    assert "4 audited queries of audit sample #2 (4 drawn, weighted design, seed 4)" in table
