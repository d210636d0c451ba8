"""The re-chunking case end to end: two chunkings of the same documents, compared at doc level.

Four documents, chunked twice with ids that have nothing in common ("a:" and "b:" chunks). The
old run ranks a-chunks, the new run b-chunks; the human labels are (query, document) labels
for the old run's pool. Doc-level judged@10 and nDCG@10 are worked out by hand, the comparison
is refused, the holes are filled through the retrieved chunks (by the fake OpenAI server and by
the offline judge), and the comparison then passes the gate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

# chunk id -> (document, text). `[[grade=N]]` tells the fake server which grade to answer.
CHUNKS = {
    "a:loop-0": ("loop", "A for loop runs its suite once for each item of an iterable."),
    "a:loop-1": ("loop", "The loop variable keeps its last value after the loop ends."),
    "a:def-0": ("def", "A function definition binds the function name in the local scope."),
    "a:def-1": ("def", "Default argument values are evaluated once, when def runs."),
    "a:exc-0": ("exc", "Exceptions propagate up the call stack until a handler catches them."),
    "a:imp-0": ("imp", "The import statement finds a module, loads it and binds a name."),
    "b:loop-0": ("loop", "[[grade=3]] For loops: the loop variable survives the loop."),
    "b:def-0": ("def", "Defaults are computed once at definition time, not per call."),
    "b:exc-1": ("exc", "A try statement can catch exceptions raised in its suite."),
    "b:imp-0": ("imp", "[[grade=2]] Importing a module runs its top-level code once."),
}
OLD = (
    "q1 Q0 a:loop-1 1 9 old\nq1 Q0 a:def-0 2 8 old\nq1 Q0 a:loop-0 3 7 old\n"
    "q1 Q0 a:exc-0 4 6 old\nq2 Q0 a:def-1 1 5 old\nq2 Q0 a:exc-0 2 4 old\n"
)
NEW = (
    "q1 Q0 b:imp-0 1 9 new\nq1 Q0 b:loop-0 2 8 new\nq1 Q0 b:exc-1 3 7 new\n"
    "q1 Q0 b:def-0 4 6 new\nq2 Q0 b:def-0 1 5 new\nq2 Q0 b:imp-0 2 4 new\n"
    "q2 Q0 b:loop-0 3 3 new\n"
)
DOC_QRELS = "q1 0 loop 3\nq1 0 def 1\nq1 0 exc 0\nq2 0 def 2\nq2 0 exc 0\n"
TOPICS = (
    "q1\tdoes the loop variable exist after a for loop\nq2\twhen are default values evaluated\n"
)


def dcg(gains: list[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


@pytest.fixture
def collection(cli: Cli, write: Writer) -> None:
    chunks = "".join(
        json.dumps({"doc_id": c, "parent_id": d, "text": t}) + "\n" for c, (d, t) in CHUNKS.items()
    )
    for args in (
        ("ingest", "queries", write("topics.tsv", TOPICS)),
        ("ingest", "docs", write("chunks.jsonl", chunks)),
        ("ingest", "run", write("old.trec", OLD)),
        ("ingest", "run", write("new.trec", NEW)),
        ("ingest", "qrels", write("doc-labels.txt", DOC_QRELS), "--level", "doc"),
    ):
        result = cli(*args)
        assert result.code == 0, result.err


def per_query(cli: Cli) -> dict[str, dict[str, dict[str, float]]]:
    result = cli("eval", "--level", "doc", "--format", "json", "--resamples", "200")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["level"] == "doc"
    return {run: data["per_query"] for run, data in doc["runs"].items()}


def test_doc_level_values_by_hand(collection: None, cli: Cli) -> None:
    values = per_query(cli)
    # old q1 -> loop (a:loop-1), def, exc; new q1 -> imp (hole), loop, exc, def.
    ideal_q1 = dcg([3, 1, 0])
    assert values["old"]["q1"]["nDCG@10"] == pytest.approx(1.0, abs=1e-12)
    assert values["new"]["q1"]["nDCG@10"] == pytest.approx(dcg([0, 3, 0, 1]) / ideal_q1, abs=1e-12)
    assert values["new"]["q1"]["Judged@10"] == pytest.approx(3 / 4, abs=1e-12)
    # new q2 -> def, imp (hole), loop (hole: loop has no label for q2).
    assert values["new"]["q2"]["nDCG@10"] == pytest.approx(1.0, abs=1e-12)
    assert values["new"]["q2"]["Judged@10"] == pytest.approx(1 / 3, abs=1e-12)
    pool = cli("pool", "--level", "doc")
    assert "doc level" in pool.out and "new" in pool.out
    assert "pool: 8 pairs, 3 holes" in pool.out
    # The chunk level has no labels at all: the two levels are never confused.
    assert "0 queries" in cli("pool", "--level", "chunk").out


@pytest.mark.slow
def test_refusal_then_backfill_through_the_fake_server(
    collection: None, cli: Cli, fake: FakeOpenAI
) -> None:
    refused = cli("compare", "old", "new", "--level", "doc", "--resamples", "200")
    assert refused.code == 3
    assert "new: judged@10 0.542, 3 holes" in refused.err
    assert "judge --depth 10 --level doc --run new --model MODEL" in refused.err

    judged = cli(
        "judge",
        "--level",
        "doc",
        "--run",
        "new",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
    )
    assert judged.code == 0, judged.err
    # Three holes, three calls: the judge read the best-ranked retrieved chunk of each document.
    assert fake.calls == 3
    assert sorted(r.passage for r in fake.requests) == sorted(
        [CHUNKS["b:imp-0"][1], CHUNKS["b:imp-0"][1], CHUNKS["b:loop-0"][1]]
    )
    from judgepool.pooling.store.connection import Store

    with Store().read() as con:
        rows = con.execute(
            "SELECT qid, doc_id, grade, level, provenance FROM judgments WHERE source = 'judge' "
            "ORDER BY qid, doc_id"
        ).fetchall()
    assert [r[:4] for r in rows] == [
        ("q1", "imp", 2, "doc"),
        ("q2", "imp", 2, "doc"),
        ("q2", "loop", 3, "doc"),
    ]
    shown = json.loads(rows[2][4])["shown"]
    assert shown == [{"doc_id": "b:loop-0", "start": 0, "end": len(CHUNKS["b:loop-0"][1])}]

    values = per_query(cli)
    ideal_q1 = dcg([3, 2, 1, 0])
    assert values["new"]["q1"]["nDCG@10"] == pytest.approx(dcg([2, 3, 0, 1]) / ideal_q1, abs=1e-12)
    assert values["old"]["q1"]["nDCG@10"] == pytest.approx(dcg([3, 1, 0]) / ideal_q1, abs=1e-12)
    passed = cli(
        "compare", "old", "new", "--level", "doc", "--format", "json", "--resamples", "200"
    )
    assert passed.code == 0, passed.err
    doc = json.loads(passed.out)
    assert doc["refused"] == [] and doc["unreliable"] is False and doc["level"] == "doc"
    # Judging again costs nothing: every hole is labelled.
    again = cli(
        "judge",
        "--level",
        "doc",
        "--run",
        "new",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
    )
    assert again.code == 0 and fake.calls == 3


@pytest.mark.slow
def test_refusal_then_backfill_with_the_offline_judge(collection: None, cli: Cli) -> None:
    assert cli("compare", "old", "new", "--level", "doc").code == 3
    judged = cli("judge", "--level", "doc", "--model", "offline", "--no-progress")
    assert judged.code == 0, judged.err
    from judgepool.pooling.store.connection import Store

    with Store().read() as con:
        labels = con.execute(
            "SELECT qid, doc_id, level, status, labeller, raw_output FROM judgments "
            "WHERE source = 'judge' AND purpose = 'label' ORDER BY qid, doc_id"
        ).fetchall()
    assert [(q, d, lvl, s) for q, d, lvl, s, _, _ in labels] == [
        ("q1", "imp", "doc", "ok"),
        ("q2", "imp", "doc", "ok"),
        ("q2", "loop", "doc", "ok"),
    ]
    assert all(lab.startswith("offline:") for *_, lab, _ in labels)
    assert all("rule" in json.loads(raw) for *_, raw in labels)
    passed = cli("compare", "old", "new", "--level", "doc", "--resamples", "200")
    assert passed.code == 0, passed.err
    assert "doc level" in passed.out
