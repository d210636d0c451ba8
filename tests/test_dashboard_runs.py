"""Dashboard, Runs page (AppTest): each run's figures, the gate colouring, holes, level switch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.export import export_labels
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import charts, frames, open_page, plain, texts_of


def test_runs_table_shows_judged_gate_and_holes_worked_out_by_hand(store: Store) -> None:
    at = open_page("runs")
    assert not at.exception, [e.value for e in at.exception]
    (table,) = frames(at, "Judged@10")
    rows = {r["run"]: r for r in table.to_dict("records")}
    assert list(rows) == ["base", "cand", "weak"]
    assert [rows[r]["Judged@10"] for r in rows] == ["1.000", "1.000", "0.600"]
    assert [rows[r]["holes@10"] for r in rows] == [0, 0, 24]
    assert [rows[r]["gate"] for r in rows] == ["ok (≥ 0.9)", "ok (≥ 0.9)", "UNDER 0.9"]
    (warning,) = texts_of(at, "warning")
    assert "1 run is under the Judged@10 gate of 0.9: weak" in plain(warning)
    assert texts_of(at, "subheader") == ["Runs — chunk level · k=10 · any judge"]
    assert "Evaluation set: 6 queries" in " ".join(texts_of(at, "caption"))


def test_runs_means_equal_trec_eval_on_the_exported_qrels(store: Store, tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is the reference")
    at = open_page("runs")
    (table,) = frames(at, "nDCG@10")
    qrels = list(ir_measures.read_trec_qrels(_save(tmp_path, export_labels(store))))
    for run in ("base", "cand", "weak"):
        ranked = list(ir_measures.read_trec_run(str(tmp_path / f"{run}.trec")))
        expected = ir_measures.calc_aggregate(
            [ir_measures.nDCG @ 10, ir_measures.R(rel=3) @ 10], qrels, ranked
        )
        row = table[table["run"] == run].iloc[0]
        shown_ndcg = float(row["nDCG@10"].split()[0])
        shown_recall = float(row["R(rel=3)@10"].split()[0])
        assert shown_ndcg == pytest.approx(expected[ir_measures.nDCG @ 10], abs=5e-4)
        assert shown_recall == pytest.approx(expected[ir_measures.R(rel=3) @ 10], abs=5e-4)
    # Every interval contains its mean; `base` ranks every query alike, so its interval is a point.
    low, high = (float(x) for x in table.iloc[0]["nDCG@10"].split("[")[1].rstrip("]").split(","))
    assert low == high == float(table.iloc[0]["nDCG@10"].split()[0])


def _save(tmp_path: Path, payload: bytes) -> str:
    path = tmp_path / "effective.qrels"
    path.write_bytes(payload)
    return str(path)


def test_runs_chart_has_every_run_and_says_its_level(store: Store) -> None:
    at = open_page("runs")
    ((spec, data),) = charts(at)
    assert spec["title"]["text"] == "Means with 95% intervals"
    assert spec["title"]["subtitle"] == "chunk level · k=10 · any judge"
    assert {d["run"] for d in data} == {"base", "cand", "weak"}
    assert {d["measure"] for d in data} == {"nDCG@10", "R(rel=3)@10", "nR@10"}
    assert all(d["low"] <= d["mean"] <= d["high"] for d in data)


def test_level_switch_reaches_the_figures(store: Store) -> None:
    at = open_page("runs")
    at.radio(key="level").set_value("doc").run()
    assert not at.exception
    # No doc-level label exists: the page says so (with the fix) instead of showing chunk figures.
    (error,) = texts_of(at, "error")
    assert "no query has an effective label at the doc level" in plain(error)
    assert not frames(at, "Judged@10")


def test_depth_changes_the_holes_column(store: Store) -> None:
    at = open_page("runs")
    at.number_input(key="depth").set_value(5).run()
    (table,) = frames(at, "holes@5")
    # weak's top 5 is d05-d09 (human) -> no hole; the others are fully judged.
    assert table["holes@5"].tolist() == [0, 0, 0]


def test_no_database_is_a_notice_not_a_traceback(tmp_path: Path) -> None:
    at = open_page("runs")
    assert not at.exception
    assert any("No database at" in plain(w) for w in texts_of(at, "warning"))


def test_a_database_labelled_per_document_opens_at_the_doc_level(
    tmp_path: Path, write: Callable[[str, str | bytes], Path]
) -> None:
    """The re-chunking case (only doc-level labels): the level switch starts on doc."""
    import json

    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs

    store = Store()
    chunks = [("c1", "D1"), ("c2", "D2")]
    ingest_docs(
        store,
        write(
            "c.jsonl",
            "".join(json.dumps({"doc_id": c, "text": c, "parent_id": p}) + "\n" for c, p in chunks),
        ),
    )
    ingest_run(store, write("r.trec", "q Q0 c1 1 2 r\nq Q0 c2 2 1 r\n"))
    ingest_qrels(store, write("d.qrels", "q 0 D1 3\nq 0 D2 0\n"), level="doc")
    app = open_page("runs")
    assert not app.exception
    assert app.radio(key="level").value == "doc"
