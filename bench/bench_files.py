"""Files to numbers: judgepool's three commands against a pytrec_eval script doing the same.

Data: bench/generate_scale_data.py in TREC DL's shape: 17 gzipped runs of 100 queries x 1,000
docs (1.7M rows) and a 129k-line qrels, generated once into bench/.data/files.
Timed, each as a fresh process (start-up included, as a user meets it), in three rounds of
ours then the reference (alternated, so that a drift of the machine's speed hits both), best of 3:
- judgepool: `ingest qrels`, `ingest run` of the 17 files in one command, `eval --format json`
  (nDCG@10, R(rel=3)@10, nR@10, Judged@10 with 10,000 bootstrap resamples) into a new database;
- pytrec_eval: one script that parses the qrels and the 17 gzipped runs with pytrec_eval's own
  parsers and computes ndcg_cut_10, recall_10 and P_10 per query, then the means.
Target (issue 23): judgepool no slower than pytrec_eval (best against best). Also recorded: each
command's share, and each round's ratio (a round's reference time over its judgepool time).
Writes bench/results/files.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from user_env import user_env

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "files"
RESULTS = HERE / "results"
RUNS, QUERIES, JUDGED = 17, 100, 1290
ROUNDS = 3

PYTREC_EVAL = """
import gzip, sys, pytrec_eval
qrels_path, *runs = sys.argv[1:]
with open(qrels_path) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "recall_10", "P_10"})
means = {}
for path in runs:
    with gzip.open(path, "rt") as fh:
        run = pytrec_eval.parse_run(fh)
    per_query = evaluator.evaluate(run)
    means[path] = {
        m: sum(v[m] for v in per_query.values()) / len(per_query)
        for m in ("ndcg_cut_10", "recall_10", "P_10")
    }
print(len(means))
"""


def ensure_data() -> list[Path]:
    """Generate the collection once (about 10 s)."""
    runs = sorted(DATA.glob("run-*.trec.gz"))
    if len(runs) < RUNS or not (DATA / "qrels.txt").exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "generate_scale_data.py"),
                *("--out", str(DATA), "--runs", str(RUNS), "--queries", str(QUERIES)),
                *("--judged", str(JUDGED), "--gzip"),
            ],
            check=True,
        )
        runs = sorted(DATA.glob("run-*.trec.gz"))
    return runs


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def ours(runs: list[Path], env: dict[str, str]) -> dict[str, float]:
    """One pass of the three commands into a new database: seconds of each."""
    db = Path(env["JUDGEPOOL_DB"])
    for leftover in (db, Path(f"{db}.wal")):
        leftover.unlink(missing_ok=True)
    judgepool = str(Path(sys.executable).with_name("judgepool"))
    return {
        "ingest_qrels_s": timed([judgepool, "ingest", "qrels", str(DATA / "qrels.txt")], env),
        "ingest_runs_s": timed([judgepool, "ingest", "run", *map(str, runs)], env),
        "eval_s": timed([judgepool, "eval", "--format", "json"], env),
    }


def main() -> None:
    runs = ensure_data()
    # bytecode cached, as an installed judgepool has it (bench/user_env.py): a warm-up pass,
    # not counted, writes the caches
    env = user_env(JUDGEPOOL_DB=str(HERE / ".data" / "bench-files.duckdb"))
    load_start = os.getloadavg()[0]
    ours(runs, env)
    reference_args = [sys.executable, "-c", PYTREC_EVAL, str(DATA / "qrels.txt"), *map(str, runs)]
    # Alternated, ours then the reference, round after round: a machine whose speed drifts
    # during the benchmark then slows both alike, and each round's ratio is a fair pair.
    passes, reference = [], []
    for _ in range(ROUNDS):
        passes.append(ours(runs, env))
        reference.append(timed(reference_args, env))
    best = min(passes, key=lambda p: sum(p.values()))
    paired = sorted(ref / sum(p.values()) for p, ref in zip(passes, reference, strict=True))
    total = sum(best.values())
    result = {
        "data": f"{RUNS} gzipped runs x {QUERIES} queries x 1,000 docs, {QUERIES * JUDGED} qrels",
        "cpu_count": os.cpu_count(),
        "load_average_1m_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        **{key: round(value, 2) for key, value in best.items()},
        "judgepool_s": round(total, 2),
        "pytrec_eval_s": round(min(reference), 2),
        "speedup_vs_pytrec_eval": round(min(reference) / total, 2),
        "paired_round_speedups": [round(r, 2) for r in paired],
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "files.json").write_text(json.dumps(result, indent=2) + "\n")
    width = max(map(len, result))
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    print("targets met" if result["speedup_vs_pytrec_eval"] >= 1 else "TARGETS MISSED")


if __name__ == "__main__":
    main()
