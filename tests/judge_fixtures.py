"""A small collection for the judge tests: three queries, chunks with parents, two runs, qrels.

Each chunk's text carries `[[grade=N]]`, the grade the fake server (tests/fake_openai.py) answers
for it, so every expected label is known. Holes at depth 10, chunk level:
  q1: c1 c3 c5 (run A), c2 c6 (run B)   c4 is labelled; c5 and c6 have the same text
  q2: c7, c9                            c9 has no text
  q3: c10                               c11 is labelled
= 8 holes: 7 requests (6 distinct texts) and 1 without text.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.store.connection import Store

Writer = Callable[[str, str | bytes], Path]

QUERIES = "q1\twhat is the boiling point of water\nq2\twho wrote hamlet\nq3\tcapital of france\n"
SALT = "Salt water boils at a slightly higher temperature than fresh water. [[grade=2]]"
CHUNKS: list[tuple[str, str, str | None]] = [
    ("c1", "P1", "Water boils at 100 degrees Celsius at sea level. [[grade=3]]"),
    ("c2", "P1", "At high altitude the boiling point of water is lower. [[grade=2]]"),
    ("c3", "P2", "Kettles are usually made of steel or plastic. [[grade=1]]"),
    ("c4", "P3", "Penguins live in Antarctica. [[grade=0]]"),
    ("c5", "P4", SALT),
    ("c6", "P5", SALT),
    ("c7", "P6", "Hamlet was written by William Shakespeare around 1600. [[grade=3]]"),
    ("c8", "P6", "Shakespeare's other plays include Macbeth. [[grade=1]]"),
    ("c9", "P7", None),
    ("c10", "P8", "Paris is the capital and largest city of France. [[grade=3]]"),
    ("c11", "P9", "France borders Spain and Italy. [[grade=1]]"),
]
RUN_A = "\n".join(
    f"{q} Q0 {d} {i + 1} {10 - i} A"
    for q, docs in (("q1", "c1 c3 c4 c5"), ("q2", "c7 c8 c9"), ("q3", "c10 c11"))
    for i, d in enumerate(docs.split())
)
RUN_B = "\n".join(
    f"{q} Q0 {d} {i + 1} {10 - i} B"
    for q, docs in (("q1", "c2 c6 c4"), ("q2", "c8 c7"), ("q3", "c11 c10"))
    for i, d in enumerate(docs.split())
)
QRELS = "q1 0 c4 0\nq2 0 c8 1\nq3 0 c11 1\n"
DOC_QRELS = "q1 0 P3 0\nq2 0 P6 1\nq3 0 P9 1\n"
#: The grade the fake answers for each hole, by doc id.
EXPECTED = {"c1": 3, "c2": 2, "c3": 1, "c5": 2, "c6": 2, "c7": 3, "c10": 3}


def build_collection(store: Store, write: Writer, doc_qrels: bool = False) -> Store:
    """Ingest the collection into `store` (doc-level qrels too when asked)."""
    ingest_queries(store, write("topics.tsv", QUERIES))
    lines = [json.dumps({"doc_id": d, "parent_id": p, "text": t}) for d, p, t in CHUNKS]
    ingest_docs(store, write("chunks.jsonl", "\n".join(lines) + "\n"))
    ingest_run(store, write("A.trec", RUN_A + "\n"))
    ingest_run(store, write("B.trec", RUN_B + "\n"))
    ingest_qrels(store, write("qrels.txt", QRELS))
    if doc_qrels:
        ingest_qrels(store, write("qrels-doc.txt", DOC_QRELS), level="doc")
    return store


_TEMPLATES: dict[bool, Path] = {}


def collection_copy(
    tmp_path_factory: pytest.TempPathFactory, dest: Path, doc_qrels: bool = False
) -> Store:
    """A fresh copy of the collection at `dest`, built once per test session (ingest is ~1 s)."""
    if doc_qrels not in _TEMPLATES:
        folder = tmp_path_factory.mktemp("judge-collection")

        def write(name: str, content: str | bytes) -> Path:
            path = folder / name
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_bytes(content)
            return path

        build_collection(Store(folder / "collection.duckdb"), write, doc_qrels)
        _TEMPLATES[doc_qrels] = folder / "collection.duckdb"
    shutil.copyfile(_TEMPLATES[doc_qrels], dest)
    return Store(dest)
