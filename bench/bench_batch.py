"""Batch judging benchmark: 20,000 holes through a local OpenAI files/batches server.

The fake batch server (tests/fake_openai_batch.py) runs in its own process; the real litellm
client and judgepool's batch modules do the rest, on a synthetic collection (N queries x 10
docs, every passage distinct, ~800 characters, one run, `--all-queries`):

- build:   holes -> JudgeRequests (plan_holes) -> JSONL lines (LineBuilder) -> files
- upload:  upload every file and create its batch
- (the provider's own processing: polls until completed, reported but not part of the target)
- collect: download the output files and parse every line (judge/batch/parse.py)
- write:   (not part of the issue's target; what collect will also do once wired) turn every
           answer into labels (LabelMaker) and cache entries, and write them (write_judgments)

Figures: wall seconds per step, peak resident memory of this process (ru_maxrss; the server's
memory is its own), and the online judge's rate floor for the same holes at 3,000 requests per
minute. Targets (issue 14): build + upload + collect under 60 s, peak memory under 1 GB; every
hole answered once with the grade the fake gives it.

    python bench/bench_batch.py                 # 20,000 holes
    python bench/bench_batch.py --holes 2000    # a quick look

Writes bench/results/batch.json.
"""

from __future__ import annotations

import argparse
import asyncio
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

WORDS = ["retrieval", "ranking", "passage", "index", "query", "model", "vector", "sparse",
         "dense", "token", "chunk", "score", "judge", "label", "relevance", "corpus", "document",
         "answer", "evidence", "search", "engine"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def build_collection(folder: Path, queries: int, per_query: int) -> Path:
    """N queries x `per_query` distinct ~800-character passages, one run; the db path."""
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
    from judgepool.pooling.store import Store

    rng = random.Random(14)
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"q{q}\tsynthetic question number {q} about "
                              f"{rng.choice(WORDS)} {rng.choice(WORDS)}\n" for q in range(queries)))
    docs = folder / "docs.jsonl"
    with docs.open("w") as out:
        for q in range(queries):
            for d in range(per_query):
                filler = " ".join(rng.choice(WORDS) for _ in range(110))
                text = f"Passage {d} for question {q}: {filler}. [[grade={(q + d) % 4}]]"
                out.write(json.dumps({"doc_id": f"q{q}-d{d}", "text": text}) + "\n")
    run = folder / "run.trec"
    run.write_text("".join(f"q{q} Q0 q{q}-d{d} {d + 1} {per_query - d} bench\n"
                           for q in range(queries) for d in range(per_query)))
    db = folder / "bench.duckdb"
    store = Store(db)
    ingest_queries(store, topics)
    ingest_docs(store, docs)
    ingest_run(store, run)
    return db


def start_server() -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai_batch", "--polls-validating", "0",
         "--polls-in-progress", "0", "--lifetime", "3600"],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    line = server.stdout.readline() if server.stdout else ""
    if not line.startswith("PORT "):
        server.kill()
        raise SystemExit(f"the fake batch server did not start: {line!r}")
    return server, int(line.split()[1])


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

    from judgepool.judge.backfill import plan_holes
    from judgepool.judge.batch.parse import collect
    from judgepool.judge.batch.provider import BatchClient, BatchStatus
    from judgepool.judge.batch.requests import LineBuilder, split_files
    from judgepool.judge.batch.support import batch_rates, batch_support
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.llm import LLMJudge, LLMSettings, load_litellm
    from judgepool.judge.provenance import LabelMaker, now_iso
    from judgepool.judge.tokens import count_tokens
    from judgepool.pooling.labels import write_judgments
    from judgepool.pooling.store import Store

    load_litellm()  # import cost (~4 s) is not batch time
    count_tokens("warm up")
    store = Store(db)
    baseline_mb = peak_mb()
    server, port = start_server()
    api_base = f"http://127.0.0.1:{port}/v1"
    model = "openai/gpt-4o-mini"
    judge = LLMJudge(LLMSettings(model=model, api_base=api_base))
    try:
        t0 = time.perf_counter()
        plan = plan_holes(store, depth=10, all_queries=True)
        requests = plan.built.requests
        t_plan = time.perf_counter()
        entries = LineBuilder(judge).entries(requests)
        limits = batch_support(model).limits
        if limits is None:
            raise SystemExit("no limits for the model's provider")
        files = split_files(entries, limits)
        t_build = time.perf_counter()

        async def upload() -> list[BatchStatus]:
            async with BatchClient(model, api_base=api_base) as client:
                created = []
                for file in files:
                    uploaded = await client.upload(file.name, file.data())
                    created.append(await client.create(uploaded.id,
                                                       {"judgepool_file": file.sha256}))
                return created

        batches = asyncio.run(upload())
        t_upload = time.perf_counter()

        async def wait() -> list[BatchStatus]:
            async with BatchClient(model, api_base=api_base) as client:
                done = []
                for batch in batches:
                    while not batch.finished:
                        batch = await client.retrieve(batch.id)
                    done.append(batch)
                return done

        finished = asyncio.run(wait())
        t_provider = time.perf_counter()
        rates = batch_rates(model)

        async def download() -> list[list[bytes]]:
            async with BatchClient(model, api_base=api_base) as client:
                return [[await client.content(f) for f in (b.output_file_id, b.error_file_id) if f]
                        for b in finished]

        contents = asyncio.run(download())
        results = [collect([e.custom_id for e in file.entries], data, rates, batch.id)
                   for file, batch, data in zip(files, finished, contents, strict=True)]
        t_collect = time.perf_counter()
        del contents
        maker = LabelMaker(judge.labeller, judge.describe())
        written = 0
        with JudgeCache() as cache:
            for file, result in zip(files, results, strict=True):
                rows = []
                judged_at = now_iso()
                for entry in file.entries:
                    answer = result.outcomes[entry.custom_id].answer
                    if answer is None:
                        continue
                    if answer.status == "ok":
                        cache.put(entry.key, maker.cache_entry(answer, judged_at))
                    rows += maker.answered(list(entry.requests), entry.key, answer, 1, judged_at)
                written += write_judgments(store, rows)
        t_write = time.perf_counter()
    finally:
        server.kill()
        server.wait()
    outcomes: Counter[str] = Counter()
    wrong = 0
    for file, result in zip(files, results, strict=True):
        outcomes.update(result.counts())
        for entry in file.entries:
            answer = result.outcomes[entry.custom_id].answer
            mark = int(entry.requests[0].passage.rsplit("[[grade=", 1)[1][0])
            wrong += answer is None or answer.grade != mark
    build_s = t_build - t0
    upload_s = t_upload - t_build
    collect_s = t_collect - t_provider
    target_s = build_s + upload_s + collect_s
    peak = peak_mb()
    floor = args.holes / (args.online_rpm / 60.0)
    cost = sum((r.cost or 0.0) for r in results)
    result: dict[str, Any] = {
        "holes": len(plan.holes),
        "requests": len(requests),
        "lines": len(entries),
        "files": len(files),
        "bytes_uploaded": sum(f.size for f in files),
        "plan_s": round(t_plan - t0, 2),
        "lines_s": round(t_build - t_plan, 2),
        "build_s": round(build_s, 2),
        "upload_and_create_s": round(upload_s, 2),
        "provider_processing_s_excluded": round(t_provider - t_upload, 2),
        "collect_download_and_parse_s": round(collect_s, 2),
        "build_upload_collect_s": round(target_s, 2),
        "write_labels_and_cache_s_not_in_target": round(t_write - t_collect, 2),
        "labels_written": written,
        "peak_rss_mb": round(peak, 1),
        "rss_before_steps_mb": round(baseline_mb, 1),
        "outcomes": dict(outcomes),
        "wrong_or_missing_grades": wrong,
        "cost_at_batch_price_usd": round(cost, 4),
        "online_floor_s_at_rpm": {str(int(args.online_rpm)): round(floor, 1)},
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    missed = [
        name for name, met in (
            ("build + upload + collect under 60 s", target_s < 60.0),
            ("peak memory under 1 GB", peak < 1024.0),
            ("every hole answered with its grade", wrong == 0
             and outcomes == Counter(ok=len(entries))),
        ) if not met
    ]
    result["targets_missed"] = missed
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "batch.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if missed:
        raise SystemExit(f"targets missed: {'; '.join(missed)}")


if __name__ == "__main__":
    main()
