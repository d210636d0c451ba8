"""Generate the scale benchmark's synthetic collection: 5 TREC runs x 2,000 queries x 1,000 docs.

Why synthetic: the targets (ingest 10M run rows, list depth-10 holes, evaluate 4 measures) are about
volume, not about realism; a seeded generator makes the data set reproducible on any machine.
Runs overlap heavily (they draw from one per-query candidate set), as real systems do, and the
qrels label part of each query's candidates, so the depth-10 pool has both labels and holes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def generate(out: Path, runs: int, queries: int, depth: int, seed: int) -> None:
    """Write run-0.trec .. run-{runs-1}.trec, qrels.txt and topics.tsv into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    candidates = 3 * depth
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
            judged = rng.choice(candidates, size=candidates // 4, replace=False)
            grades = rng.integers(0, 4, size=judged.size)
            fh.writelines(
                f"{qid} 0 d{cand[qi, j]} {g}\n" for j, g in zip(judged, grades, strict=True)
            )
    for r in range(runs):
        name = f"run-{r}"
        with (out / f"{name}.trec").open("w") as fh:
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
    ap.add_argument("--seed", type=int, default=20261129)
    args = ap.parse_args()
    generate(args.out, args.runs, args.queries, args.depth, args.seed)


if __name__ == "__main__":
    main()
