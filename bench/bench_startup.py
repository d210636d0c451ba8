"""Start-up benchmark: `judgepool --help`, and `eval` on a built TREC DL 2019 database.

Most commands a person types are short: their time is the interpreter's start, the imports and
the opening of the database. Timed, each as a fresh process (as a user meets it), median of 7:
- `judgepool --help`;
- `judgepool eval --format json` on TREC DL 2019 (6 runs, 43 queries, 9,260 qrels; built once
  into bench/.data/dl19.duckdb from ../shared/data; skipped, with a note, when that is absent).
The commands run with bytecode cached (bench/user_env.py), as an installed judgepool does.
Targets (issue 23): --help <= 0.3 s, eval <= 0.5 s. Writes bench/results/startup.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from user_env import user_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DL = Path(os.environ.get("JUDGEPOOL_SHARED_DATA", REPO.parent / "shared" / "data")) / "trec-dl"
DB = HERE / ".data" / "dl19.duckdb"
RESULTS = HERE / "results"
JUDGEPOOL = str(Path(sys.executable).with_name("judgepool"))


def median_of_7(args: list[str], env: dict[str, str]) -> float:
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)  # warm the file cache
    times = []
    for _ in range(7):
        started = time.perf_counter()
        subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def ensure_db(env: dict[str, str]) -> bool:
    """Build the DL 2019 database once; False when the shared data is absent."""
    if DB.exists():
        return True
    if not (DL / "runs" / "dl19").is_dir():
        return False
    DB.parent.mkdir(exist_ok=True)
    qrels = DL / "qrels" / "qrels.dl19-passage.txt"
    runs = sorted(map(str, (DL / "runs" / "dl19").glob("*.trec")))
    for args in (["ingest", "qrels", str(qrels)], ["ingest", "run", *runs]):
        subprocess.run([JUDGEPOOL, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return True


def main() -> None:
    env = user_env(JUDGEPOOL_DB=str(DB))  # bytecode cached, as a user's install has it
    load_start = os.getloadavg()[0]
    result: dict[str, object] = {"cpu_count": os.cpu_count()}
    result["help_s"] = round(median_of_7([JUDGEPOOL, "--help"], env), 3)
    if ensure_db(env):
        result["eval_dl19_s"] = round(median_of_7([JUDGEPOOL, "eval", "--format", "json"], env), 3)
    else:
        result["eval_dl19_s_skipped"] = f"shared data absent: {DL}"
    result["load_average_1m_start_end"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "startup.json").write_text(json.dumps(result, indent=2) + "\n")
    for key, value in result.items():
        print(f"{key:<26}  {value}")
    ok = float(str(result["help_s"])) <= 0.3 and float(str(result.get("eval_dl19_s", 0))) <= 0.5
    print("targets met" if ok else "TARGETS MISSED")


if __name__ == "__main__":
    main()
