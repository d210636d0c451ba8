"""Batch judging benchmark: 20,000 holes through a local OpenAI files/batches server, end to end.

The fake batch server (tests/fake_openai_batch.py) runs in its own process; everything else is
what `judgepool judge --batch` and `--batch-collect` run (judge/batch/session.py, the real
litellm client), on a synthetic collection (N queries x 10 docs, every passage distinct, ~800
characters, one run, `--all-queries`):

- dry run: holes -> requests -> lines -> files, with batch and online prices (nothing sent)
- submit:  the same planning, then claims and batch records in the database, upload, create
- (the provider's own processing: polls until completed, reported but not part of the target)
- collect: download and read the output file, put every answer in the judge cache, write the
           labels, outcomes and the release of the claims in one transaction

Figures: wall seconds per step, peak resident memory of this process (ru_maxrss; the server's
memory is its own), the server's request counts, and the online judge's rate floor for the same
holes at 3,000 requests per minute. Targets (issue 14): submit + collect under 60 s, peak memory
under 1 GB; every hole labelled once with the grade the fake gives it.

    python bench/bench_batch.py                 # 20,000 holes
    python bench/bench_batch.py --holes 2000    # a quick look

Writes bench/results/batch.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(REPO))

WORDS = [
    "retrieval",
    "ranking",
    "passage",
    "index",
    "query",
    "model",
    "vector",
    "sparse",
    "dense",
    "token",
    "chunk",
    "score",
    "judge",
    "label",
    "relevance",
    "corpus",
    "document",
    "answer",
    "evidence",
    "search",
    "engine",
]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def build_collection(folder: Path, queries: int, per_query: int) -> Path:
    """N queries x `per_query` distinct ~800-character passages, one run; the db path."""
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
    from judgepool.pooling.store.connection import Store

    rng = random.Random(14)
    topics = folder / "topics.tsv"
    topics.write_text(
        "".join(
            f"q{q}\tsynthetic question number {q} about {rng.choice(WORDS)} {rng.choice(WORDS)}\n"
            for q in range(queries)
        )
    )
    docs = folder / "docs.jsonl"
    with docs.open("w") as out:
        for q in range(queries):
            for d in range(per_query):
                filler = " ".join(rng.choice(WORDS) for _ in range(110))
                text = f"Passage {d} for question {q}: {filler}. [[grade={(q + d) % 4}]]"
                out.write(json.dumps({"doc_id": f"q{q}-d{d}", "text": text}) + "\n")
    run = folder / "run.trec"
    run.write_text(
        "".join(
            f"q{q} Q0 q{q}-d{d} {d + 1} {per_query - d} bench\n"
            for q in range(queries)
            for d in range(per_query)
        )
    )
    db = folder / "bench.duckdb"
    store = Store(db)
    ingest_queries(store, topics)
    ingest_docs(store, docs)
    ingest_run(store, run)
    return db


def start_server() -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fake_openai_batch",
            "--polls-validating",
            "0",
            "--polls-in-progress",
            "0",
            "--lifetime",
            "3600",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline() if server.stdout else ""
    if not line.startswith("PORT "):
        server.kill()
        raise SystemExit(f"the fake batch server did not start: {line!r}")
    return server, int(line.split()[1])


def server_counts(port: int) -> dict[str, int]:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10) as answer:
        counts: dict[str, int] = json.loads(answer.read())["counts"]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--holes", type=int, default=20_000)
    parser.add_argument("--online-rpm", type=float, default=3000.0)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key"
    work = Path(tempfile.mkdtemp(prefix="judgepool-bench-batch-"))
    os.environ["JUDGEPOOL_CACHE_DIR"] = str(work / "cache")
    db = build_collection(work, args.holes // 10, 10)

    from judgepool.judge.batch import session
    from judgepool.judge.llm import load_litellm
    from judgepool.judge.options import JudgeOptions
    from judgepool.judge.tokens import count_tokens
    from judgepool.pooling.store.connection import Store

    load_litellm()  # import cost (~4 s) is not batch time
    count_tokens("warm up")
    store = Store(db)
    baseline_mb = peak_mb()
    server, port = start_server()
    settings = JudgeOptions(
        model="openai/gpt-4o-mini",
        api_base=f"http://127.0.0.1:{port}/v1",
        depth=10,
        all_queries=True,
    )
    try:
        t0 = time.perf_counter()
        forecast = session.dry_run(store, settings)
        t_dry = time.perf_counter()
        submitted = session.submit(store, settings)
        t_submit = time.perf_counter()
        while any(not r.finished for r in session.status(store)):
            time.sleep(0.05)
        t_provider = time.perf_counter()
        collected = session.collect(store)
        t_collect = time.perf_counter()
        counts = server_counts(port)
    finally:
        server.kill()
        server.wait()
    with store.read() as con:
        rows = con.execute(
            "SELECT d.text, j.grade, j.status FROM judgments j JOIN docs d USING (doc_id) "
            "WHERE j.source = 'judge'"
        ).fetchall()
    wrong = sum(
        1
        for text, grade, status in rows
        if status != "ok" or grade != int(text.rsplit("[[grade=", 1)[1][0])
    )
    submit_s = t_submit - t_dry
    collect_s = t_collect - t_provider
    target_s = submit_s + collect_s
    peak = peak_mb()
    floor = args.holes / (args.online_rpm / 60.0)
    result: dict[str, Any] = {
        "holes": forecast.holes,
        "requests": submitted.lines,
        "files": len(submitted.files),
        "batches": len(submitted.sent),
        "bytes_uploaded": sum(size for _, size in submitted.files),
        "dry_run_s": round(t_dry - t0, 2),
        "submit_plan_upload_create_record_s": round(submit_s, 2),
        "provider_processing_s_excluded": round(t_provider - t_submit, 2),
        "collect_download_parse_cache_write_s": round(collect_s, 2),
        "submit_plus_collect_s": round(target_s, 2),
        "labels_written": collected.labels_written,
        "label_rows": len(rows),
        "outcomes": dict(collected.outcomes),
        "wrong_or_missing_grades": wrong,
        "server_requests": counts,
        "peak_rss_mb": round(peak, 1),
        "rss_before_steps_mb": round(baseline_mb, 1),
        "cost_at_batch_price_usd": round(collected.cost, 4),
        "estimated_online_cost_usd": round(forecast.online_cost or 0.0, 4),
        "online_floor_s_at_rpm": {str(int(args.online_rpm)): round(floor, 1)},
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    missed = [
        name
        for name, met in (
            ("submit + collect under 60 s", target_s < 60.0),
            ("peak memory under 1 GB", peak < 1024.0),
            (
                "every hole labelled once with its grade",
                wrong == 0
                and len(rows) == args.holes
                and collected.outcomes == Counter(ok=args.holes),
            ),
            (
                "one upload and one create per file",
                counts.get("upload") == len(submitted.files) == counts.get("create"),
            ),
        )
        if not met
    ]
    result["targets_missed"] = missed
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "batch.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if missed:
        raise SystemExit(f"targets missed: {'; '.join(missed)}")


if __name__ == "__main__":
    main()
