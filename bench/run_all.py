"""Run the benchmarks (`make bench`), print their figures as one table, keep the history.

The benchmarks are separate scripts so that one can be rerun alone; each writes its figures to
bench/results/<name>.json. This runner sequences them, then (bench/history.py) prints one table
of the figures just measured (ratios against the reference tools, measured in the same run),
appends them to bench/results/history.jsonl with the commit and the load average, and flags a
figure more than 15 % worse than the best the history records. Pass names to run a subset, e.g.
`python bench/run_all.py pool metrics`; `--table` prints the table of the last results without
running anything or recording history.

Exit status: 0 all ran and nothing regressed; 1 a benchmark failed or a figure regressed; 2 an
unknown name.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from history import (  # noqa: E402
    append,
    best_recorded,
    busy,
    current,
    read_history,
    regressions,
    table,
)

RESULTS = HERE / "results"
HISTORY = RESULTS / "history.jsonl"
BENCHMARKS = {
    "files": ["bench_files.py"],
    "startup": ["bench_startup.py"],
    "pool": ["bench_pool.py"],
    "metrics": ["bench_metrics.py"],
    "judge": ["bench_judge.py"],
    "batch": ["bench_batch.py"],
    "offline": ["bench_offline_judge.py", "--speed"],
    "dashboard": ["bench_dashboard.py"],
    "verdicts": ["bench_ppi_verdicts.py"],
}


def _commit() -> str:
    found = subprocess.run(
        ["git", "-C", str(HERE), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or "unknown"


def main(argv: list[str]) -> int:
    only_table = "--table" in argv
    names = [a for a in argv if a != "--table"]
    chosen = names or list(BENCHMARKS)
    unknown = [n for n in chosen if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
        return 2
    failed, load_start = [], os.getloadavg()[0]
    for name in [] if only_table else chosen:
        script, *args = BENCHMARKS[name]
        print(f"== {name}: {script} {' '.join(args)}".rstrip(), flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / script), *args])
        print(f"== {name}: exit {code} after {time.perf_counter() - started:.0f} s\n", flush=True)
        if code != 0:
            failed.append(name)
    ran = [n for n in chosen if n not in failed]
    now = current(RESULTS, ran)
    history = read_history(HISTORY)
    best = best_recorded(history)
    print(table(now, best))
    loads = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    if not only_table and busy({"load_average_1m_start_end": loads, "cpu_count": os.cpu_count()}):
        print("note: the machine was busy (load above its processors): this row sets no best")
    fell = regressions(now, best)
    if not only_table and now:
        append(
            HISTORY,
            {
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
                "commit": _commit(),
                "load_average_1m_start_end": loads,
                "cpu_count": os.cpu_count(),
                "figures": now,
            },
        )
    if fell:
        print(f"regressed (> 15 % below the best recorded): {', '.join(fell)}")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed or fell else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
