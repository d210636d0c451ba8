"""A run's nDCG moves although its own top 10 has no hole and got no label: the dashboard says
why (the ideal ranking changed), where it happens; and when judge labels count, a caption says it
can happen. metrics.shift on its own, then the Runs and Compare pages (AppTest)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.shift import outside_shifts
from judgepool.pooling.labels_in_top import relabelled_in_top
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, label_mark, write_judgments
from tests.dashboard_db import open_page, plain, texts_of

Writer = Callable[[str, str | bytes], Path]
# q1-d12 is ranked by `weak` only (a hole there); `base` and `cand` never rank it.
NEW = Judgment("q1", "q1-d12", 3, "judge", "late-judge")


def dcg(grades: list[int]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


# base's q1 ranking (grades by rank) and the ideal before and after q1-d12 gets grade 3.
BASE_Q1 = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3]
IDEAL_BEFORE = [3, 3, 2, 2, 2, 1, 1]
IDEAL_AFTER = [3, 3, 3, 2, 2, 2, 1, 1]
NDCG_BEFORE = dcg(BASE_Q1) / dcg(IDEAL_BEFORE)
NDCG_AFTER_Q1 = dcg(BASE_Q1) / dcg(IDEAL_AFTER)


def test_outside_shifts_names_runs_moved_by_labels_outside_their_top_k(store: Store) -> None:
    before = evaluate(store, None)
    mark = label_mark(store)
    write_judgments(store, [NEW])
    after = evaluate(store, None)
    touched = relabelled_in_top(store, after.runs, "chunk", 10, mark)
    assert touched == {"base": set(), "cand": set(), "weak": {"q1"}}
    shifts = {(s.run, s.measure): s for s in outside_shifts(before, after, touched)}
    # weak got the label in its own top 10: not explained from outside. base and cand moved.
    assert {run for run, _ in shifts} == {"base", "cand"}
    ndcg = shifts[("base", "nDCG@10")]
    assert ndcg.before == pytest.approx(NDCG_BEFORE)  # base is alike on every query
    assert ndcg.after == pytest.approx((5 * NDCG_BEFORE + NDCG_AFTER_Q1) / 6)
    assert (ndcg.changed, ndcg.entered, ndcg.left, ndcg.holes) == (("q1",), (), (), 0)
    # R(rel=3)@10: base finds 2 of q1's key docs, now 2 of 3.
    recall = shifts[("base", "R(rel=3)@10")]
    assert (recall.before, recall.after) == (1.0, pytest.approx((5 + 2 / 3) / 6))
    # No label written at all: nothing moved.
    assert outside_shifts(after, evaluate(store, None), {r: set() for r in after.runs}) == []


@pytest.mark.slow
def test_runs_page_explains_a_move_without_holes_where_it_happens(store: Store) -> None:
    at = open_page("runs")
    assert not [i for i in texts_of(at, "info") if "moved" in i]  # the first figures: nothing
    caption = [plain(c) for c in texts_of(at, "caption") if c.startswith("Judge labels count")]
    assert caption and "even when the run has no holes" in caption[0]
    write_judgments(store, [NEW])
    at.run()
    assert not at.exception
    (note,) = [plain(i) for i in texts_of(at, "info") if "moved" in i]
    before, after = f"{NDCG_BEFORE:.3f}", f"{(5 * NDCG_BEFORE + NDCG_AFTER_Q1) / 6:.3f}"
    assert (
        f"nDCG@10 of base moved {before} → {after} with no label written in its top 10 since "
        "(holes there now: 0); on 1 query (q1) new labels of docs it did not rank there "
        "changed the ideal ranking."
    ) in note
    assert "of weak" not in note  # its own top 10 got the label
    assert "raise that best" in note
    at.run()  # unchanged database: the note stays (against the first figures)
    assert [i for i in texts_of(at, "info") if "moved" in i]


@pytest.mark.slow
def test_compare_page_explains_it_beside_the_means(store: Store) -> None:
    at = open_page("compare")
    write_judgments(store, [NEW])
    at.run()
    (note,) = [plain(i) for i in texts_of(at, "info") if "moved" in i]
    assert re.search(r"nDCG@10 of cand moved \d\.\d{3} → \d\.\d{3} with no label", note)
    assert "nDCG@10 of base moved" in note


def test_no_judge_label_no_caption(write: Writer) -> None:
    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.ingest_runs import ingest_run

    store = Store()
    ingest_qrels(store, write("q.qrels", "q 0 a 3\nq 0 b 0\n"), labeller="assessors")
    ingest_run(store, write("r.trec", "q Q0 a 1 2 r\nq Q0 b 2 1 r\n"))
    at = open_page("runs")
    assert not at.exception
    assert not [c for c in texts_of(at, "caption") if c.startswith("Judge labels count")]
