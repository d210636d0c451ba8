"""The offline judge on the demo collection (part of bench/bench_offline_judge.py --demo).

The bundled collection in data/ is built as `judgepool demo` builds it (topics, v1 and v2
chunks, four runs, the v1-pool labels at the document level); the judge fills doc-level holes;
its labels are compared with our hidden labels of the same pairs (data/qrels-doc.v2-only.txt,
never shown to the judge), and each v2 run's nDCG@10 gain over its v1 run is computed under the
judge's labels and under ours. The protocol's helpers come from bench_offline_judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_offline_judge import (
    REPO,
    _merge,
    _rules,
    fill_holes,
    judge_labels,
    ndcg10,
    read_qrels,
)

DEMO_DATA = REPO / "data"
DEMO_RUNS = ("bm25-v1", "dense-v1", "bm25-v2", "dense-v2")


def build_demo(folder: Path, data: Path = DEMO_DATA) -> Any:
    """The demo database as `judgepool demo` builds it: only the v1 pool's doc-level labels."""
    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
    from judgepool.pooling.store.connection import Store

    store = Store(folder / "demo.duckdb")
    ingest_queries(store, data / "topics.tsv")
    for chunks in ("chunks-v1.jsonl", "chunks-v2.jsonl"):
        ingest_docs(store, data / chunks)
    for name in DEMO_RUNS:
        ingest_run(store, data / "runs" / f"{name}.trec", name=name)
    ingest_qrels(
        store, data / "qrels-doc.v1-pool.txt", level="doc", labeller="qrels-doc.v1-pool.txt"
    )
    return store


def doc_rankings(store: Any, names: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Each run collapsed to documents (pooling.rankings), scored -rank so no tie is left."""
    from judgepool.pooling.rankings import rankings_sql, run_keys

    out: dict[str, dict[str, dict[str, float]]] = {}
    with store.read() as con:
        for name, key in run_keys(store, list(names)).items():
            run: dict[str, dict[str, float]] = {}
            for q, d, rank in con.execute(
                f"SELECT qid, doc_id, rank FROM ({rankings_sql('doc', [key])})"
            ).fetchall():
                run.setdefault(str(q), {})[str(d)] = -float(rank)
            out[name] = run
    return out


def measure_demo(folder: Path, runs: Sequence[str], data: Path = DEMO_DATA) -> dict[str, Any]:
    """Fill the doc-level depth-10 holes of `runs` in a fresh demo database; compare with our
    hidden labels (agreement, recall of the relevant holes, each v2 run's nDCG@10 gain)."""
    from judgepool.stats.agreement import binary, cohen_kappa

    folder.mkdir(parents=True, exist_ok=True)
    store = build_demo(folder, data)
    filled = fill_holes(store, depth=10, runs=runs, level="doc")
    offline = judge_labels(store, filled["labeller"])
    visible = read_qrels(data / "qrels-doc.v1-pool.txt")
    hidden = read_qrels(data / "qrels-doc.v2-only.txt")
    pairs = [
        (hidden[q][d], g) for (q, d), (g, _) in sorted(offline.items()) if d in hidden.get(q, {})
    ]
    human, judged = [h for h, _ in pairs], [j for _, j in pairs]
    rankings = doc_rankings(store, DEMO_RUNS)
    qrels = {
        "judge": _merge(visible, {h: g for h, (g, _) in offline.items()}),
        "hidden": _merge(
            visible, {(q, d): g for q, docs in hidden.items() for d, g in docs.items()}
        ),
    }
    gains = {
        f"{new} - {old}": {
            kind: ndcg10(qr, rankings[new]) - ndcg10(qr, rankings[old])
            for kind, qr in qrels.items()
        }
        for old, new in (("dense-v1", "dense-v2"), ("bm25-v1", "bm25-v2"))
    }
    return {
        "runs": list(runs),
        "holes": filled["holes"],
        "compared": len(pairs),
        "labeller": filled["labeller"],
        "calibration": filled["describe"].get("calibration"),
        "rules": _rules(offline),
        "grades_offline": filled["grades"],
        "exact": sum(h == j for h, j in pairs) / len(pairs) if pairs else float("nan"),
        "kappa_4level": cohen_kappa(human, judged),
        "kappa_binary": cohen_kappa(binary(human), binary(judged), 2),
        "relevant_holes": sum(h >= 1 for h in human),
        "relevant_found": sum(h >= 1 and j >= 1 for h, j in pairs),
        "false_relevant": sum(h == 0 and j >= 1 for h, j in pairs),
        "ndcg10_gain": gains,
    }


def print_demo(result: dict[str, Any]) -> None:
    """One paragraph per filled set of holes."""
    print(
        f"demo, holes of {' + '.join(result['runs'])}: {result['holes']} "
        f"({result['compared']} with our hidden label); rules {result['rules']}"
    )
    print(
        f"  exact {result['exact']:.3f}, kappa 4-level {result['kappa_4level']:.3f}, "
        f"binary (>=2) {result['kappa_binary']:.3f}; relevant holes (grade >= 1) found "
        f"{result['relevant_found']}/{result['relevant_holes']}, non-relevant called relevant "
        f"{result['false_relevant']}"
    )
    for pair, gain in result["ndcg10_gain"].items():
        print(
            f"  nDCG@10 {pair}: {gain['judge']:+.3f} with the judge's labels, "
            f"{gain['hidden']:+.3f} with ours"
        )
