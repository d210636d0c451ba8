"""The benchmarks' figures as one table, their history, and the flag on a figure that fell back.

Each benchmark writes bench/results/<name>.json; `FIGURES` says which of its values are the
figures that matter (a ratio against a reference tool where there is one, measured in the same
run so that the machine's load cancels out; else seconds or MiB), which way is better, and the
target. `bench/run_all.py` reads the files the benchmarks it ran have just written, prints them
as one table, appends the row to bench/results/history.jsonl (one JSON object a line: when,
commit, load, figures) and flags a figure more than `SLACK` (15 %) worse than the best the
history holds for it: a regression is seen on the run that makes it, not found months later.
Rows measured on a busy machine (load average above the processors) are kept but never set a
best: a reference tool timed once while the machine is swamped would make a ratio look better
than it is, and every honest run after it look like a regression.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: How much worse than its best recorded value a figure may be before it is flagged.
SLACK = 0.15


@dataclass(frozen=True)
class Figure:
    """One tracked value of one benchmark's results file."""

    bench: str  # run_all's name of the benchmark
    file: str  # its results file, under bench/results/
    key: str  # the value's path in that file, dots between levels
    label: str
    higher_is_better: bool
    target: float | None = None

    @property
    def name(self) -> str:
        return f"{self.bench}.{self.key}"

    def meets(self, value: float) -> bool | None:
        if self.target is None:
            return None
        return value >= self.target if self.higher_is_better else value <= self.target

    def worse_than(self, value: float, best: float) -> bool:
        """Whether `value` is more than SLACK worse than `best` (as a ratio of the two)."""
        if self.higher_is_better:
            return value < best * (1 - SLACK)
        return value * (1 - SLACK) > best

    def better(self, a: float, b: float) -> float:
        return max(a, b) if self.higher_is_better else min(a, b)


FIGURES = (
    Figure(
        "files",
        "files.json",
        "speedup_vs_pytrec_eval",
        "files -> numbers, x pytrec_eval",
        True,
        1.0,
    ),
    Figure(
        "pool",
        "pool.json",
        "speedup_vs_ir_measures",
        "ingest 10M rows, x ir_measures.read_trec_run",
        True,
        4.0,
    ),
    Figure("pool", "pool.json", "ingest_peak_rss_mib", "ingest 10M rows, peak MiB", False, 1024),
    Figure("pool", "pool.json", "holes_table_s", "holes listing on 10M rows, s", False, 0.3),
    Figure(
        "metrics",
        "metrics.json",
        "speedup_vs_ir_measures",
        "4 measures on 10M rows, x ir-measures",
        True,
        40.0,
    ),
    Figure(
        "metrics",
        "metrics.json",
        "speedup_vs_ranx_warm",
        "4 measures on 10M rows, x ranx (warm)",
        True,
        8.0,
    ),
    Figure(
        "metrics",
        "metrics.json",
        "bootstrap_plus_comparisons_s",
        "bootstrap + 4 comparisons, s",
        False,
        1.0,
    ),
    Figure("startup", "startup.json", "help_s", "judgepool --help, s", False, 0.3),
    Figure("startup", "startup.json", "eval_dl19_s", "eval on TREC DL 2019, s", False, 0.5),
    Figure("judge", "judge.json", "wall_over_floor", "online judge, x the rate floor", False, 1.10),
    Figure("batch", "batch.json", "submit_plus_collect_s", "batch judge 20k holes, s", False, 60.0),
    Figure(
        "offline",
        "offline_judge.json",
        "speed.cold_cache.seconds",
        "offline judge 1k holes, s",
        False,
        30.0,
    ),
    Figure(
        "dashboard",
        "dashboard.json",
        "render.compare.cold_s",
        "dashboard Compare cold, s",
        False,
        2.0,
    ),
)


def lookup(data: dict[str, Any], key: str) -> float | None:
    """The number at dotted `key` in `data`, or None when it is not there."""
    found: Any = data
    for part in key.split("."):
        if not isinstance(found, dict) or part not in found:
            return None
        found = found[part]
    if isinstance(found, bool) or not isinstance(found, int | float):
        return None
    return float(found)


def current(results: Path, benches: list[str]) -> dict[str, float]:
    """The figures of the benchmarks `benches`, read from their results files."""
    out: dict[str, float] = {}
    for figure in FIGURES:
        path = results / figure.file
        if figure.bench not in benches or not path.exists():
            continue
        value = lookup(json.loads(path.read_text()), figure.key)
        if value is not None:
            out[figure.name] = value
    return out


def read_history(path: Path) -> list[dict[str, Any]]:
    """The recorded rows, oldest first (a line that does not parse is skipped, not fatal)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("figures"), dict):
            rows.append(row)
    return rows


def busy(row: dict[str, Any]) -> bool:
    """Whether the row was measured on a busy machine: a load average above its processors at
    the start or the end (other work then skews a ratio: its best must not come from there)."""
    loads, cpus = row.get("load_average_1m_start_end") or [], row.get("cpu_count") or 0
    return bool(cpus) and any(load > cpus for load in loads)


def best_recorded(history: list[dict[str, Any]]) -> dict[str, float]:
    """Each figure's best value over the history's rows measured on a machine that was not
    busy (see `busy`)."""
    best: dict[str, float] = {}
    by_name = {f.name: f for f in FIGURES}
    for row in history:
        if busy(row):
            continue
        for name, value in row["figures"].items():
            figure = by_name.get(name)
            if figure is None or not isinstance(value, int | float):
                continue
            best[name] = figure.better(best[name], value) if name in best else float(value)
    return best


def regressions(now: dict[str, float], best: dict[str, float]) -> list[str]:
    """The figures of `now` more than SLACK worse than their best recorded value."""
    return [
        f.name
        for f in FIGURES
        if f.name in now and f.name in best and f.worse_than(now[f.name], best[f.name])
    ]


def table(now: dict[str, float], best: dict[str, float]) -> str:
    """One table: figure, value now, target, best recorded, and the flags."""
    rows = [("figure", "now", "target", "best", "")]
    for f in FIGURES:
        if f.name not in now:
            continue
        value = now[f.name]
        sign = ">= " if f.higher_is_better else "<= "
        target = "" if f.target is None else f"{sign}{f.target:g}"
        flags = []
        if f.meets(value) is False:
            flags.append("target missed")
        if f.name in best and f.worse_than(value, best[f.name]):
            flags.append(f"REGRESSED > {SLACK:.0%} below best")
        shown_best = f"{best[f.name]:.4g}" if f.name in best else "-"
        rows.append((f.label, f"{value:.4g}", target, shown_best, ", ".join(flags)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)), row[4]])
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def append(path: Path, row: dict[str, Any]) -> None:
    """Add one row to the history file (created when absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(row, sort_keys=True) + "\n")
