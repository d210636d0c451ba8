"""`make bench`'s table and history (bench/history.py): a figure that fell more than 15 % below
the best recorded is flagged, whichever way is better for it; the history survives a bad line."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.scripts import script

HISTORY = Path(__file__).resolve().parent.parent / "bench" / "history.py"


def _history() -> ModuleType:
    return script(HISTORY)


def test_a_ratio_more_than_15_percent_below_its_best_is_flagged(tmp_path: Path) -> None:
    h = _history()
    path = tmp_path / "history.jsonl"
    h.append(path, {"figures": {"metrics.speedup_vs_ir_measures": 40.0, "pool.holes_table_s": 0.3}})
    h.append(path, {"figures": {"metrics.speedup_vs_ir_measures": 30.0, "pool.holes_table_s": 0.5}})
    with path.open("a") as fh:
        fh.write("not json\n")
    best = h.best_recorded(h.read_history(path))
    assert best == {"metrics.speedup_vs_ir_measures": 40.0, "pool.holes_table_s": 0.3}
    # Higher is better: 34 is exactly 15 % below 40 (kept), 33.9 is flagged.
    assert h.regressions({"metrics.speedup_vs_ir_measures": 34.0}, best) == []
    assert h.regressions({"metrics.speedup_vs_ir_measures": 33.9}, best) == [
        "metrics.speedup_vs_ir_measures"
    ]
    # Lower is better: 0.35 s against a best of 0.3 s is within 15 %, 0.36 s is not.
    assert h.regressions({"pool.holes_table_s": 0.35}, best) == []
    assert h.regressions({"pool.holes_table_s": 0.36}, best) == ["pool.holes_table_s"]
    shown = h.table({"metrics.speedup_vs_ir_measures": 33.9, "pool.holes_table_s": 0.25}, best)
    flagged = [line for line in shown.splitlines() if "REGRESSED" in line]
    assert len(flagged) == 1 and "x ir-measures" in flagged[0] and "target missed" in flagged[0]


def test_figures_are_read_from_the_results_the_run_wrote(tmp_path: Path) -> None:
    h = _history()
    (tmp_path / "pool.json").write_text(
        json.dumps({"speedup_vs_ir_measures": 4.5, "ingest_peak_rss_mib": 880})
    )
    (tmp_path / "metrics.json").write_text(json.dumps({"speedup_vs_ir_measures": 41.0}))
    (tmp_path / "dashboard.json").write_text(json.dumps({"render": {"compare": {"cold_s": 1.5}}}))
    found = h.current(tmp_path, ["pool", "dashboard"])  # metrics did not run this time
    assert found == {
        "pool.speedup_vs_ir_measures": 4.5,
        "pool.ingest_peak_rss_mib": 880.0,
        "dashboard.render.compare.cold_s": 1.5,
    }


def test_a_row_measured_on_a_busy_machine_sets_no_best(tmp_path: Path) -> None:
    h = _history()
    path = tmp_path / "history.jsonl"
    idle = {"load_average_1m_start_end": [0.5, 1.2], "cpu_count": 2}
    swamped = {"load_average_1m_start_end": [8.0, 10.9], "cpu_count": 2}
    h.append(path, {**idle, "figures": {"metrics.speedup_vs_ir_measures": 30.0}})
    h.append(path, {**swamped, "figures": {"metrics.speedup_vs_ir_measures": 93.4}})
    best = h.best_recorded(h.read_history(path))
    assert best == {"metrics.speedup_vs_ir_measures": 30.0}
    assert h.regressions({"metrics.speedup_vs_ir_measures": 29.0}, best) == []
