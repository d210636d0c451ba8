"""Judge benchmark: the online judge against a rate-limited, faulty local OpenAI-compatible server.

The fake server (tests/fake_openai.py) runs in its own process: 300 ms per answer, a token-bucket
rate limit of 20 requests/s (1 s of burst) answered with 429 + Retry-After / retry-after-ms, and
random faults on 3 % + 3 % of the calls (a 500, or a 429 as a provider under load sends it),
drawn before the limit (they do not use it up). The real litellm client and the real labelling
loop, at the judge's default concurrency, fill 748 holes (TREC DL 2019's pool size) of a
synthetic collection (N queries x 10 docs, every text distinct, one run, `--all-queries`).

Measures:
- wall time of the labelling run against the rate limit's floor (holes / allowed rate), and the
  judge's own CPU time per call (claims, renewals, cache, writes: what it adds to each call),
  and the writer's database transactions (labels, claims and renewals share them);
- 429s received, in total and those of the rate limit after the first 10 s (the AIMD window has
  settled by then), the injected faults apart;
- lost or doubled labels (every hole must have exactly one ok label) and calls answered 200
  (exactly one per hole: nothing paid twice);
- the cache-hit path: the same holes in a fresh database with the warm cache (pairs/s for the
  labelling run, and end to end with planning; best of 3).

Targets (issues 4 and 23): wall within 10 % of the floor, < 5 % of calls answered 429 by the
limit after 10 s, the judge's CPU per call under 10 % of the latency, 0 lost or doubled labels,
cache hits > 5,000 pairs/s.

    python bench/bench_judge.py            # 748 holes at 20 requests/s, 3 % + 3 % faults (~40 s)
    python bench/bench_judge.py --holes 2000 --rpm 600 --faults 0 --latency 0.2   # issue 4's

Writes bench/results/judge.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(REPO))


def start_server(latency: float, rpm: float, faults: float) -> tuple[subprocess.Popen[str], int]:
    """The fake server in its own process (so that it does not share our CPU time slices)."""
    server = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "fake_openai.py"),
            "--latency",
            str(latency),
            "--rpm",
            str(rpm),
            "--fail-500",
            str(faults),
            "--fail-429",
            str(faults),
            "--lifetime",
            "3600",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline() if server.stdout else ""
    if not line.startswith("PORT "):
        server.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return server, int(line.split()[1])


def server_stats(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/stats", timeout=10) as response:
        return dict(json.load(response))


def build_collection(folder: Path, queries: int, per_query: int, total: int | None = None) -> Path:
    """N queries x `per_query` distinct passages (the first `total` of them), one run ranking
    them; returns the db path."""
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
    from judgepool.pooling.store.connection import Store

    topics = folder / "topics.tsv"
    topics.write_text("".join(f"q{q}\tsynthetic question number {q}\n" for q in range(queries)))
    docs = folder / "docs.jsonl"
    with docs.open("w") as out:
        for q in range(queries):
            for d in range(per_query):
                text = f"Passage {d} written for question {q}. [[grade={(q + d) % 4}]]"
                out.write(json.dumps({"doc_id": f"q{q}-d{d}", "text": text}) + "\n")
    run = folder / "run.trec"
    rows = [(q, d) for q in range(queries) for d in range(per_query)][:total]
    run.write_text("".join(f"q{q} Q0 q{q}-d{d} {d + 1} {per_query - d} bench\n" for q, d in rows))
    db = folder / "template.duckdb"
    store = Store(db)
    ingest_queries(store, topics)
    ingest_docs(store, docs)
    ingest_run(store, run)
    return db


def label_counts(db: Path) -> tuple[int, int, int]:
    """(pairs with exactly one ok label, pairs with none, pairs with more than one)."""
    from judgepool.pooling.store.connection import Store

    with Store(db).read() as con:
        holes = con.execute("SELECT count(*) FROM run_rows").fetchone()
        per_pair = con.execute(
            "SELECT n, count(*) FROM (SELECT r.qid, r.doc_id, count(j.id) AS n FROM run_rows r "
            "LEFT JOIN judgments j ON j.qid = r.qid AND j.doc_id = r.doc_id AND j.status = 'ok' "
            "GROUP BY ALL) GROUP BY n"
        ).fetchall()
    counts = Counter({int(n): int(c) for n, c in per_pair})
    total = int(holes[0]) if holes else 0
    doubled = sum(c for n, c in counts.items() if n > 1)
    if sum(counts.values()) != total:
        raise SystemExit("pair count mismatch")
    return counts[1], counts[0], doubled


def run_judge(db: Path, port: int, concurrency: int) -> tuple[Any, float, float, float]:
    """Plan and label every hole; returns (stats, planning seconds, labelling seconds, CPU
    seconds of this process while labelling)."""
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.llm import LLMJudge, LLMSettings
    from judgepool.judge.loop import LoopOptions
    from judgepool.judge.run.plan import backfill, plan_holes
    from judgepool.pooling.store.connection import Store

    store = Store(db)
    judge = LLMJudge(LLMSettings("openai/bench-model", api_base=f"http://127.0.0.1:{port}/v1"))
    started = time.perf_counter()
    plan = plan_holes(store, depth=10, all_queries=True)
    planned = time.perf_counter()
    cpu = time.process_time()
    with JudgeCache() as cache:
        stats = backfill(store, judge, plan, LoopOptions(concurrency=concurrency), cache)
    cpu = time.process_time() - cpu
    return stats, planned - started, time.perf_counter() - planned, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    from judgepool.judge.options import JUDGE_DEFAULTS

    parser.add_argument("--holes", type=int, default=748)
    parser.add_argument("--rpm", type=float, default=1200.0, help="rate limit, requests/minute")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per answer")
    parser.add_argument("--faults", type=float, default=0.03, help="share of 500s, and of 429s")
    parser.add_argument("--concurrency", type=int, default=JUDGE_DEFAULTS.concurrency)
    args = parser.parse_args()
    rpm = args.rpm
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key"
    work = Path(tempfile.mkdtemp(prefix="judgepool-bench-"))
    os.environ["JUDGEPOOL_CACHE_DIR"] = str(work / "cache")
    template = build_collection(work, -(-args.holes // 10), 10, args.holes)
    from judgepool.judge.llm import load_litellm

    load_litellm()  # import cost (~3 s) is not labelling time
    server, port = start_server(args.latency, rpm, args.faults)
    try:
        first_db = work / "first.duckdb"
        first_db.write_bytes(template.read_bytes())
        stats, plan_s, label_s, cpu_s = run_judge(first_db, port, args.concurrency)
        served = server_stats(port)
        once, lost, doubled = label_counts(first_db)
        best: tuple[Any, float, float, float] | None = None
        for attempt in range(3):  # best of 3: the path is short and other processes add noise
            second_db = work / f"cached-{attempt}.duckdb"
            second_db.write_bytes(template.read_bytes())
            timing = run_judge(second_db, port, args.concurrency)
            if best is None or timing[2] < best[2]:
                best = timing
        if best is None:
            raise SystemExit("no cache-hit run")
        cached, cached_plan_s, cached_label_s, _ = best
        cached_once, cached_lost, cached_doubled = label_counts(second_db)
        calls_after = server_stats(port)["calls"]
    finally:
        server.kill()
        server.wait()
    floor = args.holes / (rpm / 60.0)
    first_call = served["first_call"] or 0.0
    late = first_call + 10.0
    late_429 = sum(1 for t in served["times_429"] if t > late)
    late_429 -= sum(1 for t in served["times_injected_429"] if t > late)  # the limit's own
    late_calls = sum(1 for t in served["call_times"] if t > late)
    cpu_per_call = cpu_s / max(1, served["calls"])
    result = {
        "holes": args.holes,
        "rate_limit_per_min": rpm,
        "latency_s": args.latency,
        "faults_500_429": [args.faults, args.faults],
        "concurrency_max": args.concurrency,
        "floor_s": round(floor, 1),
        "label_wall_s": round(label_s, 1),
        "wall_over_floor": round(label_s / floor, 3),
        "cpu_per_call_ms": round(1000 * cpu_per_call, 2),
        "plan_s": round(plan_s, 2),
        "writer_transactions": stats.transactions,
        "calls": served["calls"],
        "answered_200": served["answered"],
        "answered_429": served["statuses"].get("429", 0),
        "answered_500": served["statuses"].get("500", 0),
        "injected": served["injected"],
        "calls_after_10s": late_calls,
        "answered_429_after_10s": late_429,
        "share_429_after_10s": round(late_429 / max(1, late_calls), 4),
        "labels_once": once,
        "labels_lost": lost,
        "labels_doubled": doubled,
        "cache_hit_calls": calls_after - served["calls"],
        "cache_hit_pairs": cached.cached,
        "cache_hit_label_s": round(cached_label_s, 3),
        "cache_hit_pairs_per_s": round(cached.cached / cached_label_s),
        "cache_hit_end_to_end_pairs_per_s": round(cached.cached / (cached_label_s + cached_plan_s)),
        "cache_hit_labels_lost_or_doubled": cached_lost + cached_doubled,
        "cache_hit_labels_once": cached_once,
        "cache_hit_transactions": cached.transactions,
        "loop_outcomes": dict(stats.outcomes),
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    missed = [
        name
        for name, met in (
            ("wall within 10% of the floor", label_s <= 1.10 * floor),
            ("< 5% of calls answered 429 after 10 s", late_429 < 0.05 * max(1, late_calls)),
            ("CPU per call < 10% of the latency", cpu_per_call < 0.1 * args.latency),
            ("no lost or doubled label", lost == doubled == 0 and once == args.holes),
            ("one paid call per hole", served["answered"] == args.holes),
            ("cache hits > 5,000 pairs/s", cached.cached / cached_label_s > 5000),
            ("no call on cache hits", calls_after == served["calls"]),
        )
        if not met
    ]
    result["targets_missed"] = missed
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "judge.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if missed:
        raise SystemExit(f"targets missed: {'; '.join(missed)}")


if __name__ == "__main__":
    main()
