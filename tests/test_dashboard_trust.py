"""The dashboard's trust loop (AppTest): the Audit page's labelling queue (blind, keys 0-3, save and
next, undo, skip, progress, a confirmation that stays), its calibration panel, and the Compare
page's judge-corrected panel. tests/test_dashboard_e2e_trust.py drives the queue in Chromium."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.api.audit import sample
from judgepool.metrics.calibration import calibration_figures
from judgepool.metrics.compare import compare
from judgepool.pooling.audit.calibration_pairs import CalibrationRun, record_run
from judgepool.pooling.export import export_labels
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import frames, open_page, plain, queue_button, texts_of

Writer = Callable[[str, str | bytes], Path]


def human(store: Store) -> str:
    return export_labels(store, "chunk", "human").decode()


def opened(at: Any) -> str:
    """The queue's open pair (the page's first subheader)."""
    return plain(texts_of(at, "subheader")[0])


def everything_shown(at: Any) -> str:
    kinds = ("text", "markdown", "caption", "subheader", "success", "info", "warning", "code")
    return "\n".join(plain(v) for kind in kinds for v in texts_of(at, kind))


@pytest.mark.slow
def test_without_a_sample_the_queue_offers_to_draw_one(store: Store) -> None:
    at = open_page("audit")
    assert not at.exception, [e.value for e in at.exception]
    assert any("No audit sample at this level yet" in plain(i) for i in texts_of(at, "info"))
    at.number_input(key="queue_queries").set_value(3)
    at.number_input(key="queue_seed").set_value(2)
    at.button(key="queue_draw").click().run()
    assert not at.exception
    assert any(
        "Audit sample drawn: drew 3 of 6 queries" in plain(s) for s in texts_of(at, "success")
    )
    progress = at.get("progress")[0].proto.text
    assert (
        progress == "12 of 15 pairs labelled · 0 of 3 queries fully audited (audit sample #1, "
        "seed 2)"
    )


@pytest.mark.slow
def test_the_queue_is_blind_keyed_and_saves_then_opens_the_next_pair(store: Store) -> None:
    sample(store, 3, seed=2)  # queries q3 q4 q2: their d10 are judged 2 and have no human label
    at = open_page("audit")
    assert opened(at) == "q3 · q3-d10"
    shown = texts_of(at, "text")
    assert "Query: question q3?" in shown and "passage 10 about q3" in shown
    assert "judge's grade" not in everything_shown(at).lower().replace("judge's grade first", "")
    assert queue_button(at, "undo").disabled  # nothing to undo yet
    at.text_input(key="queue_user").input("tester")
    queue_button(at, "grade_1").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (saved,) = texts_of(at, "success")
    assert plain(saved) == (
        "Saved grade 1 (related) for q3 · q3-d10 as a human label by audit:tester (13 of 15 "
        "labelled). The judge had said 2."
    )
    assert [t.proto.body for t in at.toast] == [saved]
    assert "q3 0 q3-d10 1" in human(store)
    assert opened(at) == "q4 · q4-d10"
    assert at.get("progress")[0].proto.text.startswith("13 of 15 pairs labelled · 1 of 3 queries")
    at.run()  # a refresh keeps the confirmation on screen
    assert [plain(s) for s in texts_of(at, "success")] == [plain(saved)]
    # Undo removes the label and shows its pair again; skip puts a pair last.
    queue_button(at, "undo").click().run()
    assert "q3-d10" not in human(store)
    assert opened(at) == "q3 · q3-d10"
    assert any(
        "Undone: grade 1 for q3 · q3-d10 is removed" in plain(i) for i in texts_of(at, "info")
    )
    queue_button(at, "skip").click().run()
    assert opened(at) == "q4 · q4-d10"
    for expected in ("q4", "q2", "q3"):
        assert opened(at) == f"{expected} · {expected}-d10"
        queue_button(at, "grade_3").click().run()
    assert any(
        "Every pair of the audit sample has a human label" in plain(s)
        for s in texts_of(at, "success")
    )
    assert at.get("progress")[0].proto.text.startswith("15 of 15 pairs labelled · 3 of 3")


@pytest.mark.slow
def test_the_judges_grade_can_be_shown_first(store: Store) -> None:
    sample(store, 2, seed=2)
    at = open_page("audit")
    at.toggle(key="queue_peek").set_value(True).run()
    assert "The judge's grade: 2" in texts_of(at, "caption")
    queue_button(at, "grade_0").click().run()
    with store.read() as con:
        row = con.execute(
            "SELECT provenance->>'judge_grade_hidden' FROM judgments WHERE labeller LIKE 'audit:%'"
        ).fetchone()
    assert row == ("false",)


def test_the_calibration_panel_shows_the_stored_figures(store: Store) -> None:
    figures = calibration_figures([0, 0, 1, 2, 3, 3], [0, 1, 1, 3, 3, 2], [40, 10, 5, 5])
    stored = {
        "figures": figures.to_json(),
        "sample_counts": [2, 1, 1, 2],
        "pool_counts": [40, 10, 5, 5],
        "failures": {},
        "cost": 0.01,
    }
    record_run(
        store,
        CalibrationRun(
            0,
            "",
            "chunk",
            10,
            "openai/x@relevance-v1",
            "openai/x",
            "sha256:abc",
            4,
            6,
            6,
            0,
            stored,
        ),
    )
    at = open_page("audit", tab="Agreement & calibration")
    assert not at.exception
    (runs,) = frames(at, "α ordinal (pool mix)")
    assert runs["judge"].tolist() == ["openai/x@relevance-v1"]
    assert runs["exact (pool mix)"].tolist() == [round(figures.population.exact or 0, 3)]
    (table,) = frames(at, "pool mix")
    by = dict(zip(table["figure"], table["sample"], strict=True))
    assert by["exact agreement"] == 0.5  # 3 of the 6 pairs agree
    assert by["Krippendorff's α (ordinal)"] == round(figures.sample.alpha_ordinal or 0, 3)


@pytest.mark.slow
def test_compare_shows_the_corrected_interval_beside_the_plain_one(
    store: Store, write: Writer
) -> None:
    at = open_page("compare")
    at.selectbox(key="compare_baseline").set_value("base").run()
    at.multiselect(key="compare_candidates").set_value(["cand"]).run()
    assert not at.exception
    assert any(
        "No judge-corrected interval yet: no audit yet" in plain(w) for w in texts_of(at, "warning")
    )
    assert any("audit sample --queries" in c for c in texts_of(at, "code"))
    sample(store, 4, seed=2)
    # every judge label of the four drawn queries (q3 q4 q2 q5), d10 the only one left
    audited = write("a.txt", "q3 0 q3-d10 0\nq4 0 q4-d10 1\nq2 0 q2-d10 3\nq5 0 q5-d10 1\n")
    ingest_qrels(store, audited, labeller="ana")
    at.run()
    (table,) = frames(at, "corrected 95%")
    cmp = compare(store, "base", ["cand"])
    assert cmp.corrected is not None
    for _, row in table.iterrows():
        found = cmp.corrected.deltas[row["candidate"], row["measure"]]
        assert found.estimate.ci is not None
        assert row["judge-corrected"] == pytest.approx(found.estimate.estimate)
        assert found.verdict is not None and row["judge check"] == found.verdict.word
        assert row["audited"] == "4 of 6"
