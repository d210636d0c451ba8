"""TREC run writing and the document-level collapse used for pooling and evaluation.

Rank order is made identical to trec_eval's own order (score descending, then doc id
descending) by sorting on the rounded score that is actually written, so every consumer
(rank column, trec_eval, ir_measures) sees the same ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

DEPTH = 100
DECIMALS = 6

Ranking = list[tuple[str, float]]


def order(scored: Iterable[tuple[str, float]], depth: int = DEPTH) -> Ranking:
    """Round scores, sort by (score desc, id desc) and cut at depth."""
    rounded = [(d, round(s, DECIMALS)) for d, s in scored]
    rounded.sort(key=lambda x: (x[1], x[0]), reverse=True)
    return rounded[:depth]


def write_run(path: Path, tag: str, rankings: Mapping[str, Ranking]) -> int:
    """Write 'qid Q0 docid rank score tag' lines; queries in the mapping's order."""
    lines = []
    for qid, ranking in rankings.items():
        for rank, (doc, score) in enumerate(ranking, 1):
            lines.append(f"{qid} Q0 {doc} {rank} {score:.{DECIMALS}f} {tag}\n")
    with path.open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines)
    return len(lines)


def read_run(path: Path) -> dict[str, Ranking]:
    """Read a TREC run back, each query's list in trec_eval order."""
    runs: dict[str, list[tuple[str, float]]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            qid, _q0, doc, _rank, score, _tag = line.split()
            runs.setdefault(qid, []).append((doc, float(score)))
    return {q: sorted(r, key=lambda x: (x[1], x[0]), reverse=True) for q, r in runs.items()}


def collapse(ranking: Ranking, parent: Mapping[str, str], depth: int | None = None) -> Ranking:
    """Chunk ranking -> document ranking: each parent's first (best) occurrence, in order.

    The document keeps that chunk's score; the result stays in trec_eval order because scores
    along the input never increase (ties keep the input's order, i.e. chunk id descending)."""
    seen: set[str] = set()
    out: Ranking = []
    for chunk, score in ranking:
        doc = parent[chunk]
        if doc in seen:
            continue
        seen.add(doc)
        out.append((doc, score))
        if depth is not None and len(out) == depth:
            break
    return out
