"""Run every benchmark in turn (`make bench`); each writes its figures to bench/results/*.json.

The benchmarks are separate scripts so that one can be rerun alone; this runner only sequences
them and reports which, if any, missed its targets. Pass names to run a subset, e.g.
`python bench/run_all.py pool metrics`.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = {
    "pool": ["bench_pool.py"],
    "metrics": ["bench_metrics.py"],
    "judge": ["bench_judge.py"],
    "batch": ["bench_batch.py"],
    "offline": ["bench_offline_judge.py"],
    "dashboard": ["bench_dashboard.py"],
    "verdicts": ["bench_ppi_verdicts.py"],
}


def main(names: list[str]) -> int:
    chosen = names or list(BENCHMARKS)
    unknown = [n for n in chosen if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
        return 2
    failed = []
    for name in chosen:
        script, *args = BENCHMARKS[name]
        print(f"== {name}: {script} {' '.join(args)}".rstrip(), flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(HERE / script), *args])
        print(f"== {name}: exit {code} after {time.perf_counter() - started:.0f} s\n", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
