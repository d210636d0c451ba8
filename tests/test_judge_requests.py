"""Holes -> judge requests: texts, no_text holes, truncation to a token budget, doc-level views."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import UsageError
from judgepool.judge.requests import CHUNK_GAP, build_requests
from judgepool.judge.tokens import count_tokens, cut_to_tokens
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs
from judgepool.pooling.pool import PoolSpec, list_holes
from judgepool.pooling.rankings import run_keys
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.texts import retrieved_chunks
from tests.judge_fixtures import CHUNKS, collection_copy

Writer = Callable[[str, str | bytes], Path]
TEXTS = {d: t for d, _, t in CHUNKS}


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb", doc_qrels=True)


def test_chunk_requests_carry_the_texts_and_skip_holes_without_text(store: Store) -> None:
    holes = list_holes(store, PoolSpec(depth=10))
    built = build_requests(store, holes)
    assert [(r.qid, r.doc_id) for r in built.requests] == [
        ("q1", "c1"),
        ("q1", "c2"),
        ("q1", "c3"),
        ("q1", "c6"),
        ("q1", "c5"),
        ("q2", "c7"),
        ("q3", "c10"),
    ]
    for r in built.requests:
        assert r.passage == TEXTS[r.doc_id]
        assert r.shown[0].doc_id == r.doc_id and (r.shown[0].start, r.shown[0].end) == (
            0,
            len(r.passage),
        )
        assert not r.truncated and r.level == "chunk"
    assert r.query == "capital of france"
    assert [(s.qid, s.doc_id, s.reason) for s in built.skipped] == [("q2", "c9", "no passage text")]


def test_long_passages_are_cut_to_the_budget_and_flagged(store: Store, write: Writer) -> None:
    long_text = "Water boils at one hundred degrees. " * 200 + "é" * 50
    ingest_docs(store, write("long.jsonl", json.dumps({"doc_id": "c1", "text": long_text}) + "\n"))
    built = build_requests(store, list_holes(store, PoolSpec(depth=10)), passage_tokens=40)
    first = built.requests[0]
    assert first.doc_id == "c1" and first.truncated
    assert long_text.startswith(first.passage)
    assert 0 < count_tokens(first.passage) <= 40
    assert first.shown[0].end == len(first.passage)
    assert built.truncated == 1


def test_cut_to_tokens_on_multibyte_text() -> None:
    text = "日本語のテキスト" * 30
    cut = cut_to_tokens(text, 7)
    assert cut.truncated and text.startswith(text[: cut.end]) and cut.end > 0
    assert count_tokens(text[: cut.end]) <= 7
    whole = cut_to_tokens("short text", 100)
    assert (whole.end, whole.truncated) == (len("short text"), False)


def test_queries_without_text_are_skipped(store: Store, write: Writer) -> None:
    ingest_run(store, write("C.trec", "q4 Q0 c1 1 1 C\n"))  # q4 has no topic text
    built = build_requests(store, list_holes(store, PoolSpec(depth=10, all_queries=True)))
    assert ("q4", "c1", "no query text") in [(s.qid, s.doc_id, s.reason) for s in built.skipped]


def test_retrieved_chunks_of_a_document_in_rank_order(store: Store) -> None:
    keys = list(run_keys(store).values())
    found = retrieved_chunks(store, keys, [("q1", "P1"), ("q2", "P6"), ("q2", "P7")])
    # P1's chunks: c1 is rank 1 in run A, c2 rank 1 in run B -> tie on rank, by chunk id.
    assert [(c.chunk_id, c.best_rank) for c in found[("q1", "P1")]] == [("c1", 1), ("c2", 1)]
    # P6 for q2: c7 (A rank 1, B rank 2) and c8 (A rank 2, B rank 1): both best rank 1.
    assert [c.chunk_id for c in found[("q2", "P6")]] == ["c7", "c8"]
    assert [(c.chunk_id, c.text) for c in found[("q2", "P7")]] == [("c9", None)]
    assert retrieved_chunks(store, keys, []) == {}


def test_doc_requests_show_the_best_chunks_within_the_budget(store: Store) -> None:
    holes = list_holes(store, PoolSpec(depth=10, level="doc"))
    assert {(h.qid, h.doc_id) for h in holes} == {
        ("q1", "P1"),
        ("q1", "P2"),
        ("q1", "P4"),
        ("q1", "P5"),
        ("q2", "P7"),
        ("q3", "P8"),
    }
    built = build_requests(store, holes, level="doc")
    by_pair = {(r.qid, r.doc_id): r for r in built.requests}
    p1 = by_pair[("q1", "P1")]
    assert p1.level == "doc"
    assert [s.doc_id for s in p1.shown] == ["c1", "c2"]
    assert p1.passage == TEXTS["c1"] + CHUNK_GAP + TEXTS["c2"]
    assert [(s.start, s.end) for s in p1.shown] == [(0, len(TEXTS["c1"])), (0, len(TEXTS["c2"]))]
    only_best = build_requests(store, holes, level="doc", max_chunks=1)
    assert [r.passage for r in only_best.requests if r.doc_id == "P1"] == [TEXTS["c1"]]
    tight = build_requests(store, holes, level="doc", passage_tokens=count_tokens(TEXTS["c1"]))
    assert [s.doc_id for r in tight.requests if r.doc_id == "P1" for s in r.shown] == ["c1"]
    assert [(s.qid, s.doc_id, s.reason) for s in built.skipped] == [
        ("q2", "P7", "no retrieved chunk of it has text")
    ]


def test_doc_requests_only_show_chunks_the_chosen_runs_retrieved(store: Store) -> None:
    holes = list_holes(store, PoolSpec(depth=10, level="doc", runs=["A"]))
    built = build_requests(store, holes, level="doc", runs=["A"])
    p1 = next(r for r in built.requests if r.doc_id == "P1")
    assert [s.doc_id for s in p1.shown] == ["c1"]  # c2 is retrieved by run B only


def test_bad_budgets_are_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="too small"):
        build_requests(store, [], passage_tokens=3)
