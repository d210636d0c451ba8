"""A small collection drawn from a fixed seed, for the CI features' tests and golden files.

30 queries in three classes (factoid 12, howto 10, list 8), every other one also in `en`, and
one in `pilot` (a group too small to conclude on);
15 graded docs per query (grades drawn 0-3). `base` ranks ten of them at random; `cand` does the
same except on the howto queries, where it ranks the least relevant first (a regression on one
class); `better` ranks the most relevant first everywhere. `cand` also retrieves one doc per
query that the qrels lack (`extra-N`), labelled by a judge (`write_judge_labels`), so the labels
come from two sources. Everything is drawn from `numpy.random.default_rng(SEED)`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SEED = 15
CLASSES = ("factoid", "howto", "list")
JUDGE = "openai/gpt-4o-mini@relevance-v1"


def _class(i: int) -> str:
    return "factoid" if i < 12 else "howto" if i < 22 else "list"


def write_collection(folder: Path) -> dict[str, Path]:
    """topics.tsv (with a group column), groups.tsv, qrels.txt and three runs, in `folder`."""
    rng = np.random.default_rng(SEED)
    qids = [f"q{i:02d}" for i in range(1, 31)]
    topics = ["qid\ttext\tgroup"]
    groups = []
    qrels, runs = [], {"base": [], "cand": [], "better": []}
    for i, q in enumerate(qids):
        names = [_class(i)] + (["en"] if i % 2 == 0 else []) + (["pilot"] if i == 0 else [])
        topics.append(f"{q}\tquestion number {i}\t{','.join(names)}")
        groups += [f"{q}\t{g}" for g in names]
        docs = [f"d{i}-{j}" for j in range(15)]
        grades = rng.integers(0, 4, size=15)
        qrels += [f"{q} 0 {d} {g}" for d, g in zip(docs, grades, strict=True)]
        shuffled = [docs[j] for j in rng.permutation(15)]
        worst = [docs[j] for j in np.argsort(grades, kind="stable")]
        best = [docs[j] for j in np.argsort(-grades, kind="stable")]
        ranked = {
            "base": shuffled[:10],
            "cand": [*(worst if _class(i) == "howto" else shuffled)[:9], f"extra-{i}"],
            "better": best[:10],
        }
        for run, ranking in ranked.items():
            runs[run] += [f"{q} Q0 {d} {r + 1} {10 - r} {run}" for r, d in enumerate(ranking)]
    files = {
        "topics": folder / "topics.tsv",
        "groups": folder / "groups.tsv",
        "qrels": folder / "qrels.txt",
        **{run: folder / f"{run}.trec" for run in runs},
    }
    files["topics"].write_text("\n".join(topics) + "\n", encoding="utf-8")
    files["groups"].write_text("\n".join(groups) + "\n", encoding="utf-8")
    files["qrels"].write_text("\n".join(qrels) + "\n", encoding="utf-8")
    for run, lines in runs.items():
        files[run].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files


def write_judge_labels(db: Path) -> None:
    """The judge's labels of cand's `extra-N` docs (grade 1 on even queries, 0 on odd ones)."""
    from judgepool.pooling.store.connection import Store
    from judgepool.pooling.store.judgments import Judgment, write_judgments

    write_judgments(
        Store(db),
        [Judgment(f"q{i + 1:02d}", f"extra-{i}", 1 - i % 2, "judge", JUDGE) for i in range(30)],
    )


def ingest_with_holey(folder: Path, cli: Callable[..., Any], db: str, holey: str) -> None:
    """The collection in `folder`, ingested through the CLI into `db` with one more run, `holey`
    (TREC lines whose docs nobody labelled: a run under the gate), and the judge's labels."""
    files = write_collection(folder)
    (folder / "holey.trec").write_text(holey, encoding="utf-8")
    runs = (files["base"], files["cand"], files["better"], folder / "holey.trec")
    for args in (
        ("ingest", "queries", files["topics"]),
        ("ingest", "qrels", files["qrels"]),
        ("ingest", "run", *runs),
    ):
        assert cli("--db", db, *args).code == 0
    write_judge_labels(folder / db)
