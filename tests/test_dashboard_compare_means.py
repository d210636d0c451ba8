"""Dashboard, Compare page (AppTest): each run's own means with intervals and significance markers
beside the differences, the bounds the CLI computes, the Holm note, and each doc's text."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_db import TRICKY_PASSAGE, frames, open_page, plain, texts_of

Writer = Callable[[str, str | bytes], Path]
Cli = Callable[..., CliResult]


def means_of(at: object) -> dict[str, dict[str, object]]:
    """The means table's rows by run, with the bounds table's beside them."""
    (table,) = frames(at, "role")
    (bounds,) = frames(at, "nDCG@10 bounds")
    found = {r["run"]: r for r in table.to_dict("records")}
    for r in bounds.to_dict("records"):
        found[r["run"]].update(r)
    return found


def test_each_runs_means_with_intervals_beside_the_differences(store: Store) -> None:
    at = open_page("compare")
    assert not at.exception
    rows = means_of(at)
    assert list(rows) == ["base", "cand"]
    assert [rows[r]["role"] for r in rows] == ["baseline", "candidate"]
    # base ranks every query alike: its interval is a point. Its nDCG@10 on each query, by hand:
    # grades 0 0 0 0 1 1 2 2 3 3 at ranks 1..10 against the ideal 3 3 2 2 2 1 1 (d10: judge 2).
    dcg = sum(g / math.log2(r + 1) for r, g in enumerate([0, 0, 0, 0, 1, 1, 2, 2, 3, 3], 1))
    ideal = sum(g / math.log2(r + 1) for r, g in enumerate([3, 3, 2, 2, 2, 1, 1], 1))
    expected = f"{dcg / ideal:.3f} [{dcg / ideal:.3f}, {dcg / ideal:.3f}]"
    assert rows["base"]["nDCG@10"] == expected
    assert rows["base"]["R(rel=3)@10"] == "1.000 [1.000, 1.000]"
    assert [rows[r]["Judged@10"] for r in rows] == ["1.000", "1.000"]
    assert [rows[r]["holes@10"] for r in rows] == [0, 0]
    assert rows["cand"]["nDCG@10 bounds"] == "no hole"
    # Six queries are too few for a Holm-significant difference here: no marker.
    assert not any(mark in str(v) for r in rows.values() for v in r.values() for mark in "▲▼")
    (deltas,) = frames(at, "verdict")  # the differences table is still there, after the means
    assert set(deltas["verdict"]) == {"no significant difference"}
    assert texts_of(at, "subheader")[:2] == [
        "Means with 95% intervals — chunk level · k=10 · any judge",
        "Paired differences from base — chunk level · k=10 · any judge",
    ]


@pytest.mark.slow
def test_bounds_are_the_ones_the_cli_computes(store: Store, cli: Cli) -> None:
    at = open_page("compare")
    at.multiselect(key="compare_candidates").set_value(["cand", "weak"]).run()
    at.checkbox(key="compare_anyway").check().run()
    rows = means_of(at)
    done = cli("compare", "base", "cand", "weak", "--force", "--format", "json")
    report = json.loads(done.out)["runs"]
    assert report["weak"]["holes"] == rows["weak"]["holes@10"] == 24
    for measure in ("nDCG@10", "R(rel=3)@10", "nR@10"):
        low, high = report["weak"]["bounds"][measure]
        assert rows["weak"][f"{measure} bounds"] == f"{low:.3f} .. {high:.3f}"
        # Holes counted grade 0 change nothing: the low bound is the mean shown.
        assert rows["weak"][measure].startswith(f"{low:.3f} [")
        assert high > low
    assert rows["base"]["nDCG@10 bounds"] == "no hole"
    assert rows["weak"]["Judged@10"] == "0.600"


def clear_win(store: Store, write: Writer) -> Store:
    """Ten queries; `good` ranks each one's only relevant doc first, `mid` fifth, `poor` tenth."""
    qids = [f"t{i}" for i in range(10)]
    qrels = "".join(
        f"{q} 0 {q}-rel 3\n" + "".join(f"{q} 0 {q}-n{j} 0\n" for j in range(9)) for q in qids
    )
    ingest_qrels(store, write("win.qrels", qrels), labeller="assessors")
    for name, at_rank in (("good", 1), ("mid", 5), ("poor", 10)):
        lines = []
        for q in qids:
            docs = [f"{q}-n{j}" for j in range(9)]
            docs.insert(at_rank - 1, f"{q}-rel")
            lines += [f"{q} Q0 {d} {r} {100 - r} {name}\n" for r, d in enumerate(docs, 1)]
        ingest_run(store, write(f"{name}.trec", "".join(lines)))
    return store


@pytest.mark.slow
def test_significance_markers_follow_the_holm_verdict(write: Writer) -> None:
    clear_win(Store(), write)
    at = open_page("compare")
    at.selectbox(key="compare_baseline").set_value("poor").run()
    at.multiselect(key="compare_candidates").set_value(["good"]).run()
    rows = means_of(at)
    (deltas,) = frames(at, "verdict")
    verdicts = dict(zip(deltas["measure"], deltas["verdict"], strict=True))
    # nDCG@10: 1 against 1/log2(11) on every query -> better; R and nR: equal (1 = 1).
    assert verdicts == {
        "nDCG@10": "better",
        "R(rel=3)@10": "no significant difference",
        "nR@10": "no significant difference",
    }
    assert rows["good"]["nDCG@10"] == "1.000 [1.000, 1.000] ▲"
    assert rows["good"]["R(rel=3)@10"] == "1.000 [1.000, 1.000]"
    assert rows["poor"]["nDCG@10"] == f"{1 / math.log2(11):.3f} [0.289, 0.289]"  # no mark
    at.selectbox(key="compare_baseline").set_value("good").run()
    at.multiselect(key="compare_candidates").set_value(["poor"]).run()
    assert means_of(at)["poor"]["nDCG@10"] == f"{1 / math.log2(11):.3f} [0.289, 0.289] ▼"
    assert any("▲ / ▼: significantly better / worse" in plain(c) for c in texts_of(at, "caption"))


@pytest.mark.slow
def test_the_holm_note_says_other_candidates_change_the_correction(write: Writer) -> None:
    clear_win(Store(), write)
    at = open_page("compare")
    at.selectbox(key="compare_baseline").set_value("poor").run()
    at.multiselect(key="compare_candidates").set_value(["good"]).run()
    note = [c for c in texts_of(at, "caption") if c.startswith("Holm's correction")]
    assert note and "(1 × 3 = 3 tests)" in note[0]
    assert "adding or removing a candidate changes the corrected p of the others" in note[0]
    (alone,) = frames(at, "verdict")
    at.multiselect(key="compare_candidates").set_value(["good", "mid"]).run()
    note = [c for c in texts_of(at, "caption") if c.startswith("Holm's correction")]
    assert "(2 × 3 = 6 tests)" in note[0]
    # What the note warns of: good's own p is unchanged, its Holm-corrected p is not.
    (both,) = frames(at, "verdict")
    good = both[both["candidate"] == "good"]
    assert good["p"].tolist() == alone["p"].tolist()
    p_ndcg = float(alone["p"].iloc[0])  # text: `0.0312`, never at the floor here
    assert float(alone["p (Holm)"].iloc[0]) == pytest.approx(3 * p_ndcg, abs=1e-4)
    assert float(good["p (Holm)"].iloc[0]) > float(alone["p (Holm)"].iloc[0])


@pytest.mark.slow
def test_a_docs_text_is_shown_on_demand_as_plain_text(store: Store) -> None:
    at = open_page("compare")
    at.selectbox(key="compare_query").set_value("q1").run()
    assert TRICKY_PASSAGE not in texts_of(at, "text")  # nothing until asked
    read = at.selectbox(key="compare_read_baseline")
    assert read.options[-1] == "#10 q1-d00 — grade 3 (human)"
    read.set_value("q1-d00").run()
    assert not at.exception
    assert TRICKY_PASSAGE in texts_of(at, "text")  # verbatim, as text
    assert not any("not html" in m for m in texts_of(at, "markdown"))
    assert "grade 3, human label by trec-assessors" in [plain(c) for c in texts_of(at, "caption")]


@pytest.mark.slow
def test_a_holes_text_says_it_is_a_hole(store: Store) -> None:
    at = open_page("compare")
    at.multiselect(key="compare_candidates").set_value(["weak"]).run()
    at.checkbox(key="compare_anyway").check().run()
    at.selectbox(key="compare_chart_candidate").set_value("weak").run()
    at.selectbox(key="compare_query").set_value("q2").run()
    read = at.selectbox(key="compare_read_candidate")
    assert read.options[-1] == "#10 q2-d14 — HOLE"
    read.set_value("q2-d14").run()
    assert "passage 14 about q2" in texts_of(at, "text")
    assert "HOLE: no label yet; every measure counts it as non-relevant." in texts_of(at, "caption")
