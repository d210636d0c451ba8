#!/usr/bin/env python3
"""Check the demo story on the committed files: doc-level nDCG@10 and Judged@10 of the four
runs, first with only the labels the demo ingests (qrels-doc.v1-pool.txt), then with the
hidden v2-only labels added (the "truth" a complete judgment would give).

Runs are collapsed to documents the same way the pools were built: per query, walk the chunk
ranking in trec_eval order (score desc, doc id desc) and keep each parent's first occurrence.
The collapsed documents are then scored by rank (n, n-1, ...) so that no ties remain: ties do
occur (topics 'if' and 'else' have identical text) and ir_measures' Judged provider breaks
ties by ascending doc id while trec_eval uses descending, which would make the two measures
see different top 10s. Usage: .venv/bin/python data/story_check.py [--by-phrasing]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep data/ free of __pycache__
sys.path.insert(0, str(DATA))

import ir_measures  # noqa: E402
from demo_build.jsonio import read_jsonl  # noqa: E402
from demo_build.pool import read_qrels  # noqa: E402
from demo_build.runs import collapse, read_run  # noqa: E402
from ir_measures import Judged, Qrel, ScoredDoc, nDCG  # noqa: E402

RUNS = ("bm25-v1", "dense-v1", "bm25-v2", "dense-v2")
MEASURES = [nDCG @ 10, Judged @ 10]


def doc_runs() -> dict[str, list[ScoredDoc]]:
    """Each run collapsed to document level."""
    parent = {
        r["doc_id"]: r["parent_id"]
        for v in ("v1", "v2")
        for r in read_jsonl(DATA / f"chunks-{v}.jsonl")
    }
    out: dict[str, list[ScoredDoc]] = {}
    for name in RUNS:
        run = read_run(DATA / "runs" / f"{name}.trec")
        out[name] = []
        for q, ranking in run.items():
            docs = collapse(ranking, parent)
            out[name] += [ScoredDoc(q, d, float(len(docs) - i)) for i, (d, _) in enumerate(docs)]
    return out


def qrels(*files: str) -> list[Qrel]:
    """Union of qrels files (they are disjoint by construction)."""
    return [
        Qrel(q, d, g)
        for f in files
        for q, docs in read_qrels(DATA / f).items()
        for d, g in docs.items()
    ]


def table(runs: dict[str, list[ScoredDoc]], keep: str | None) -> str:
    """Markdown table; `keep` restricts to qids ending with that phrasing."""
    sets = {
        "v1-pool labels only": qrels("qrels-doc.v1-pool.txt"),
        "all labels (v1-pool + v2-only)": qrels("qrels-doc.v1-pool.txt", "qrels-doc.v2-only.txt"),
    }
    rows = [
        "| run | nDCG@10 (v1-pool) | Judged@10 (v1-pool) | nDCG@10 (all) | Judged@10 (all) |",
        "|---|---|---|---|---|",
    ]
    for name, sdocs in runs.items():
        if keep:
            sdocs = [s for s in sdocs if s.query_id.endswith(keep)]
        cells = []
        for qr in sets.values():
            qr_k = [q for q in qr if not keep or q.query_id.endswith(keep)]
            agg = ir_measures.calc_aggregate(MEASURES, qr_k, sdocs)
            cells += [f"{agg[nDCG @ 10]:.3f}", f"{agg[Judged @ 10]:.3f}"]
        rows.append(f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--by-phrasing", action="store_true", help="also print ref / ticket tables")
    args = ap.parse_args()
    runs = doc_runs()
    print("All 72 queries (doc level):\n" + table(runs, None))
    if args.by_phrasing:
        for ph in ("ref", "ticket"):
            print(f"\n{ph} queries only:\n" + table(runs, "-" + ph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
