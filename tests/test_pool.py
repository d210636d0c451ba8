"""Pools, holes, judged@k and effective labels, checked against values worked out by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import UsageError
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.pool import PoolSpec, list_holes, pool_summary
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, effective_labels_sql, write_judgments
from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt

Writer = Callable[[str, str | bytes], Path]

# Run A ranks q1: a b c d (scores 4..1), q2: e f.   Run B ranks q1: c x a, q3: y.
RUN_A = "q1 Q0 a 1 4 A\nq1 Q0 b 2 3 A\nq1 Q0 c 3 2 A\nq1 Q0 d 4 1 A\nq2 Q0 e 1 2 A\nq2 Q0 f 2 1 A\n"
RUN_B = "q1 Q0 c 1 3 B\nq1 Q0 x 2 2 B\nq1 Q0 a 3 1 B\nq3 Q0 y 1 1 B\n"
QRELS = "q1 0 a 2\nq1 0 c 0\nq1 0 z 3\nq2 0 e 1\n"


@pytest.fixture
def store(write: Writer, prebuilt: Prebuilt) -> Store:
    def build() -> None:
        store = Store()
        ingest_run(store, write("A.trec", RUN_A))
        ingest_run(store, write("B.trec", RUN_B))
        ingest_qrels(store, write("qrels.txt", QRELS))
        ingest_queries(store, write("topics.tsv", "q1\tfirst\nq3\tthird\n"))
        ingest_docs(
            store,
            write(
                "docs.jsonl",
                "".join(json.dumps({"doc_id": d, "text": f"text of {d}"}) + "\n" for d in "abcdx"),
            ),
        )

    prebuilt(build)
    return Store()


def test_judged_at_k_and_holes_by_hand(store: Store) -> None:
    summary = pool_summary(store, PoolSpec(depth=3))
    # Evaluation set = {q1, q2} (q3 has no label). Top-3: A/q1 = a b c (a, c labelled) -> 2/3;
    # A/q2 = e f (e labelled) -> 1/2; B/q1 = c x a -> 2/3; B misses q2 -> 0.
    a, b = summary.runs
    assert (a.run, a.queries, a.missing_queries, a.holes) == ("A", 2, 0, 2)
    assert a.judged == pytest.approx((2 / 3 + 1 / 2) / 2, abs=1e-12)
    assert (b.run, b.queries, b.missing_queries, b.holes) == ("B", 2, 1, 1)
    assert b.judged == pytest.approx((2 / 3 + 0) / 2, abs=1e-12)
    # Pool: q1 {a, b, c, x}, q2 {e, f}: 6 pairs, holes b, x, f; f has no text, q2 no query text.
    assert (summary.scope_queries, summary.pairs, summary.holes) == (2, 6, 3)
    assert (summary.holes_without_text, summary.holes_without_query_text) == (1, 1)
    assert summary.queries_without_labels == 1


def test_holes_list_and_all_queries(store: Store) -> None:
    holes = list_holes(store, PoolSpec(depth=3))
    assert [
        (h.qid, h.doc_id, h.best_rank, h.runs, h.has_text, h.has_query_text) for h in holes
    ] == [
        ("q1", "b", 2, ("A",), True, True),
        ("q1", "x", 2, ("B",), True, True),
        ("q2", "f", 2, ("A",), False, False),
    ]
    everything = list_holes(store, PoolSpec(depth=3, all_queries=True))
    assert [(h.qid, h.doc_id) for h in everything][-1] == ("q3", "y")
    summary = pool_summary(store, PoolSpec(depth=3, all_queries=True))
    assert summary.scope_queries == 3 and summary.queries_without_labels == 0
    only_b = pool_summary(store, PoolSpec(depth=1, runs=["B"]))
    assert [(r.run, r.judged, r.holes) for r in only_b.runs] == [("B", 0.5, 0)]


def test_effective_label_rules(store: Store) -> None:
    def effective(level: str = "chunk", judge: str | None = None) -> dict[tuple[str, str], int]:
        with store.read() as con:
            found = con.execute(
                f"SELECT qid, doc_id, grade FROM ({effective_labels_sql(level, judge)})"
            ).fetchall()
        return {(q, d): g for q, d, g in found}

    write_judgments(
        store,
        [
            Judgment("q1", "b", 3, "judge", "judge-1"),  # fills hole b
            Judgment("q1", "b", None, "judge", "judge-1", status="unparsed", raw_output="??"),
            Judgment("q1", "x", None, "judge", "judge-1", status="error"),  # still a hole
            Judgment("q1", "a", 0, "judge", "judge-1"),  # human label a=2 wins
            Judgment("q2", "f", 1, "judge", "judge-1"),
            Judgment("q2", "f", 2, "judge", "judge-2"),  # latest judge label wins by default
        ],
    )
    labels = effective()
    assert labels[("q1", "b")] == 3
    assert ("q1", "x") not in labels
    assert labels[("q1", "a")] == 2
    assert labels[("q2", "f")] == 2
    assert effective(judge="judge-1")[("q2", "f")] == 1
    assert ("q1", "b") not in effective(judge="judge-2")
    # A later human label (an override) beats the qrels label.
    write_judgments(store, [Judgment("q1", "a", 1, "human", "override", note="checked")])
    assert effective()[("q1", "a")] == 1
    assert effective(level="doc") == {}
    holes = {(h.qid, h.doc_id) for h in list_holes(store, PoolSpec(depth=3))}
    assert holes == {("q1", "x")}


def test_unknown_run_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match=r"unknown run\(s\): nope \(runs in the database: A, B\)"):
        pool_summary(store, PoolSpec(runs=["nope"]))


def test_doc_level_collapses_chunks_to_their_best_ranked_document(write: Writer) -> None:
    store = Store()
    # Chunks D1#0, D1#1 belong to D1, D2#0 to D2; "solo" has no parent (its own document).
    ingest_docs(
        store,
        write(
            "chunks.jsonl",
            "".join(
                json.dumps(r) + "\n"
                for r in [
                    {"doc_id": "D1#0", "text": "one", "parent_id": "D1"},
                    {"doc_id": "D1#1", "text": "two", "parent_id": "D1"},
                    {"doc_id": "D2#0", "text": "three", "parent_id": "D2"},
                    {"doc_id": "solo", "text": "four"},
                ]
            ),
        ),
    )
    ingest_run(
        store,
        write("r.trec", "q1 Q0 D1#1 1 9 r\nq1 Q0 D2#0 2 8 r\nq1 Q0 D1#0 3 7 r\nq1 Q0 solo 4 6 r\n"),
    )
    ingest_qrels(store, write("doc.qrels", "q1 0 D1 3\n"), level="doc")
    holes = list_holes(store, PoolSpec(depth=10, level="doc"))
    assert [(h.doc_id, h.best_rank, h.has_text) for h in holes] == [
        ("D2", 2, True),
        ("solo", 3, True),
    ]
    summary = pool_summary(store, PoolSpec(depth=2, level="doc"))
    assert summary.runs[0].judged == pytest.approx(0.5)
    # At the chunk level nothing is labelled: the doc-level labels are never confused with it.
    assert pool_summary(store, PoolSpec(depth=2, level="chunk")).scope_queries == 0


def test_pool_cli_summary_and_list(store: Store, cli: Callable[..., CliResult]) -> None:
    result = cli("pool", "--depth", "3")
    assert result.code == 0
    assert "2 queries (queries with at least one label)" in result.out
    assert "6 pairs, 3 holes (1 without passage text, 1 without query text)" in result.out
    assert "judgepool --db" in result.out and "judge --depth 3 --model MODEL" in result.out
    assert "1 queries of these runs have no label" in result.out
    listed = cli("pool", "--depth", "3", "--list")
    assert listed.out.splitlines() == [
        "qid\tdoc_id\tbest_rank\truns\thas_text\thas_query_text",
        "q1\tb\t2\tA\t1\t1",
        "q1\tx\t2\tB\t1\t1",
        "q2\tf\t2\tA\t0\t0",
    ]
    jsonl = cli("pool", "--depth", "3", "--list", "--format", "jsonl", "--run", "B")
    assert [json.loads(line) for line in jsonl.out.splitlines()] == [
        {
            "qid": "q1",
            "doc_id": "x",
            "level": "chunk",
            "best_rank": 2,
            "runs": ["B"],
            "has_text": True,
            "has_query_text": True,
        }
    ]


def test_info_commands(store: Store, cli: Callable[..., CliResult]) -> None:
    runs = cli("runs", "--format", "json")
    assert [(r["run"], r["rows"], r["queries"]) for r in json.loads(runs.out)] == [
        ("A", 6, 2),
        ("B", 4, 2),
    ]
    queries = cli("queries", "--format", "tsv").out.splitlines()
    assert queries[0] == "qid\truns\thuman_labels\tjudge_labels\ttext"
    assert queries[1:] == ["q1\t2\t3\t0\tfirst", "q2\t1\t1\t0\t", "q3\t1\t0\t0\tthird"]
    status = json.loads(cli("status", "--format", "json").out)
    assert (status["queries"], status["docs"], status["runs"], status["run_rows"]) == (2, 5, 2, 10)
    assert status["labels"] == [
        {
            "level": "chunk",
            "source": "human",
            "labeller": "qrels.txt",
            "status": "ok",
            "count": 4,
            "canary": 0,
            "calibration": 0,
        }
    ]


def test_commands_on_a_missing_database_say_how_to_create_it(cli: Callable[..., CliResult]) -> None:
    result = cli("--db", "nowhere.duckdb", "pool")
    assert result.code == 1
    assert result.err.startswith("error: no database at nowhere.duckdb — create it with")
