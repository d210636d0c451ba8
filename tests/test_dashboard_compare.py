"""Dashboard, Compare page (AppTest): differences, the refusal and its command, "compare anyway"
marking everything UNRELIABLE, the per-query chart and the two rankings of a query."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import (
    CAND_ORDER,
    JUDGE,
    QIDS,
    WEAK_ORDER,
    charts,
    frames,
    new_app,
    open_page,
    plain,
    run_text,
    texts_of,
)

Writer = Callable[[str, str | bytes], Path]


def test_a_comparison_above_the_gate_shows_paired_differences(store: Store) -> None:
    at = open_page("compare")
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="compare_baseline").value == "base"
    assert at.multiselect(key="compare_candidates").value == ["cand"]
    assert not texts_of(at, "error")
    (deltas,) = frames(at, "verdict")
    assert deltas["measure"].tolist() == ["nDCG@10", "R(rel=3)@10", "nR@10"]
    assert (deltas["candidate"] == "cand").all() and (deltas["queries"] == 6).all()
    assert "reliability" not in deltas.columns
    # cand wins on q1-q4, ties on q5, loses on q6: a positive mean nDCG difference.
    ndcg = deltas.iloc[0]
    assert ndcg["difference"] > 0
    low, high = (float(x) for x in ndcg["95% interval"].strip("[]").split(","))
    assert low <= ndcg["difference"] <= high
    # p is text: `0.0312`, or `< 0.0001` at the floor of the sign flips.
    assert 0 < float(ndcg["p"]) <= float(ndcg["p (Holm)"]) <= 1
    ((spec, rows),) = charts(at)
    assert spec["title"]["text"] == "cand − base: nDCG@10 per query (4 wins, 1 loss)"
    assert spec["title"]["subtitle"] == "chunk level · k=10 · any judge"
    assert [r["outcome"] for r in rows] == ["win"] * 4 + ["tie", "loss"]
    assert rows[-1]["qid"] == "q6"
    assert [r["delta"] for r in rows] == sorted((r["delta"] for r in rows), reverse=True)


def test_the_page_opens_on_the_most_recent_pair_the_gate_lets_through(
    store: Store, write: Writer
) -> None:
    """Issue 24: the demo opened Compare on bm25-v1 vs bm25-v2, a refused pair, so a new user's
    first sight was a red refusal. Here the first run by name (`aaa-weak`) is under the gate,
    and `new` (ingested last, fully judged) passes: the page opens on cand vs new."""
    ingest_run(store, write("aaa.trec", run_text("aaa-weak", {q: WEAK_ORDER for q in QIDS})))
    ingest_run(store, write("new.trec", run_text("new", CAND_ORDER)))
    at = open_page("compare")
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="compare_baseline").value == "cand"
    assert at.multiselect(key="compare_candidates").value == ["new"]
    assert not texts_of(at, "error") and frames(at, "verdict")
    # The refusal is kept for the pair a person picks.
    at.selectbox(key="compare_baseline").set_value("aaa-weak").run()
    at.multiselect(key="compare_candidates").set_value(["new"]).run()
    (banner,) = texts_of(at, "error")
    assert "Comparison refused: 1 run is under the judged@10 gate of 0.9" in plain(banner)
    assert "`offline` for the local judge" in " ".join(texts_of(at, "markdown"))


@pytest.mark.slow
def test_a_run_under_the_gate_is_refused_with_the_command_to_fix_it(store: Store) -> None:
    at = open_page("compare")
    at.multiselect(key="compare_candidates").set_value(["cand", "weak"]).run()
    assert not at.exception
    (banner,) = texts_of(at, "error")
    assert "Comparison refused: 1 run is under the judged@10 gate of 0.9" in plain(banner)
    assert "weak: judged@10 0.600, 24 holes" in plain(banner)
    command = f"judgepool --db {store.path.resolve()} judge --depth 10 --run weak --model MODEL"
    assert command in texts_of(at, "code")
    assert not frames(at, "verdict") and not charts(at)  # no numbers while refused
    assert at.checkbox(key="compare_anyway").value is False


@pytest.mark.slow
def test_compare_anyway_shows_figures_all_marked_unreliable(store: Store) -> None:
    at = open_page("compare")
    at.multiselect(key="compare_candidates").set_value(["cand", "weak"]).run()
    at.checkbox(key="compare_anyway").check().run()
    assert not at.exception
    (deltas,) = frames(at, "verdict")
    assert len(deltas) == 6 and deltas["reliability"].str.startswith("UNRELIABLE").all()
    weak_rows = deltas[deltas["candidate"] == "weak"]
    assert (weak_rows["reliability"] == "UNRELIABLE (a run under the gate)").all()
    assert any(plain(w).startswith("UNRELIABLE: compared anyway") for w in texts_of(at, "warning"))
    assert all(h.startswith("UNRELIABLE") for h in texts_of(at, "subheader"))
    ((spec, _),) = charts(at)
    assert spec["title"]["text"].startswith("UNRELIABLE — ")
    # Changing the runs withdraws the consent: the refusal comes back, with no figures.
    at.selectbox(key="compare_baseline").set_value("cand").run()
    at.multiselect(key="compare_candidates").set_value(["weak"]).run()
    assert at.checkbox(key="compare_anyway").value is False and not frames(at, "verdict")


@pytest.mark.slow
def test_a_query_opens_both_rankings_with_labels_and_their_source(store: Store) -> None:
    at = open_page("compare")
    at.selectbox(key="compare_query").set_value("q6").run()
    assert not at.exception
    assert "query q6: question q6?" in texts_of(at, "text")
    base, cand = frames(at, "rank")
    assert base["doc_id"].tolist() == [f"q6-d{n:02d}" for n in range(9, -1, -1)]
    assert base["grade"].tolist() == ["0", "0", "0", "0", "1", "1", "2", "2", "3", "3"]
    assert set(base["source"]) == {"human"}
    last = cand.iloc[-1]
    assert (last["doc_id"], last["grade"], last["source"], last["labeller"]) == (
        "q6-d10",
        "2",
        "judge",
        JUDGE,
    )


@pytest.mark.slow
def test_holes_show_as_holes_in_the_rankings(store: Store) -> None:
    at = open_page("compare")
    at.multiselect(key="compare_candidates").set_value(["weak"]).run()
    at.checkbox(key="compare_anyway").check().run()
    at.selectbox(key="compare_chart_candidate").set_value("weak").run()
    at.selectbox(key="compare_query").set_value("q1").run()
    _, weak = frames(at, "rank")
    assert weak["doc_id"].tolist()[-4:] == ["q1-d11", "q1-d12", "q1-d13", "q1-d14"]
    # Marked as holes, not as a grade of None (q1-d11's only label is unparsed: still a hole).
    assert weak["grade"].tolist() == ["1", "0", "0", "0", "0", "2", "HOLE", "HOLE", "HOLE", "HOLE"]
    assert weak["source"].tolist()[-4:] == ["hole: no label (counts as non-relevant)"] * 4
    captions = texts_of(at, "caption")
    assert "No hole in its top 10: every doc has a label." in captions  # the baseline
    line = "4 holes in its top 10 (ranks 7, 8, 9, 10): unlabelled, counted as non-relevant"
    assert any(c.startswith(line) for c in captions)


def test_a_link_opens_a_comparison_and_a_query(store: Store) -> None:
    at = new_app()
    at.run()
    at.query_params.update({"baseline": "cand", "candidate": ["base", "nope"], "query": "q2"})
    at.switch_page("dashboard/compare.py").run()
    assert not at.exception
    assert at.selectbox(key="compare_baseline").value == "cand"
    assert at.multiselect(key="compare_candidates").value == ["base"]
    assert at.selectbox(key="compare_query").value == "q2"
    assert len(frames(at, "rank")) == 2
