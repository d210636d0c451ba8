"""Generate the scale benchmarks' synthetic collections: N TREC runs x Q queries x D docs + qrels.

Why synthetic: the targets (ingest 10M run rows, list depth-10 holes, evaluate 4 measures, files
to numbers against pytrec_eval) are about volume, not about realism; a seeded generator makes
the data set reproducible on any machine. Runs overlap heavily (they draw from one per-query
candidate set), as real systems do, and the qrels label part of each query's candidates, so the
depth-10 pool has both labels and holes.

    generate_scale_data.py                        # 5 runs x 2,000 queries x 1,000 docs (10M rows)
    generate_scale_data.py --runs 17 --queries 100 --judged 1290 --gzip   # TREC DL's shape
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path
from typing import IO

import numpy as np


def _open(path: Path, compress: bool) -> IO[str]:
    if compress:
        return gzip.open(path.with_name(path.name + ".gz"), "wt", compresslevel=6)
    return path.open("w")


def generate(
    out: Path,
    runs: int,
    queries: int,
    depth: int,
    seed: int,
    judged: int | None = None,
    compress: bool = False,
) -> None:
    """Write run-0.trec .. run-{runs-1}.trec (`.gz` when `compress`), qrels.txt and topics.tsv
    into `out`; `judged` labelled docs per query (default: a quarter of its candidates)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    candidates = 3 * depth
    per_query = candidates // 4 if judged is None else min(judged, candidates)
    qids = [f"q{i:05d}" for i in range(queries)]
    # One candidate set per query; each run ranks a random depth-sized subset of it.
    cand = np.stack(
        [
            qi * 10 * candidates + rng.permutation(10 * candidates)[:candidates]
            for qi in range(queries)
        ]
    )
    with (out / "topics.tsv").open("w") as fh:
        for qid in qids:
            fh.write(f"{qid}\tsynthetic query {qid}\n")
    with (out / "qrels.txt").open("w") as fh:
        for qi, qid in enumerate(qids):
            labelled = rng.choice(candidates, size=per_query, replace=False)
            grades = rng.integers(0, 4, size=labelled.size)
            fh.writelines(
                f"{qid} 0 d{cand[qi, j]} {g}\n" for j, g in zip(labelled, grades, strict=True)
            )
    for r in range(runs):
        name = f"run-{r}"
        with _open(out / f"{name}.trec", compress) as fh:
            for qi, qid in enumerate(qids):
                picked = rng.permutation(candidates)[:depth]
                scores = np.sort(rng.random(depth) * 30)[::-1]
                fh.writelines(
                    f"{qid} Q0 d{cand[qi, j]} {rank} {s:.6f} {name}\n"
                    for rank, (j, s) in enumerate(zip(picked, scores, strict=True), start=1)
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("bench/.data/scale"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=None, help="labelled docs per query")
    ap.add_argument("--gzip", action="store_true", help="gzip the run files (run-N.trec.gz)")
    ap.add_argument("--seed", type=int, default=20261129)
    args = ap.parse_args()
    generate(args.out, args.runs, args.queries, args.depth, args.seed, args.judged, args.gzip)


if __name__ == "__main__":
    main()
