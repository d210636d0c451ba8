"""The library's front door, used only through `import judgepool as jp` (issue 12.2).

The judge is the real litellm client talking to the fake OpenAI server on 127.0.0.1
(tests/fake_openai.py), so labels and call counts are exact.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import judgepool as jp
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import CHUNKS, EXPECTED, QRELS, QUERIES, RUN_A, RUN_B

Writer = Callable[[str, str | bytes], Path]


@pytest.fixture
def db(write: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> jp.Database:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # the fake server's provider
    database = jp.open(tmp_path / "eval.duckdb")
    assert not database.path.exists()  # nothing is created before the first ingest
    database.ingest_queries(write("topics.tsv", QUERIES))
    chunks = "".join(
        json.dumps({"doc_id": d, "parent_id": p, "text": t}) + "\n" for d, p, t in CHUNKS
    )
    database.ingest_docs(write("chunks.jsonl", chunks))
    database.ingest_run(write("A.trec", RUN_A + "\n"))
    database.ingest_run(write("B.trec", RUN_B + "\n"))
    database.ingest_qrels(write("qrels.txt", QRELS))
    return database


def test_pool_tables_are_polars_frames(db: jp.Database) -> None:
    pool = db.pool(depth=10)
    assert isinstance(pool.summary, pl.DataFrame)
    assert pool.summary.columns == ["run", "queries", "missing_queries", "judged", "holes"]
    assert pool.summary.filter(pl.col("run") == "A")["holes"].item() == 6
    assert pool.holes.height == 8
    assert set(pool.holes.columns) >= {"qid", "doc_id", "best_rank", "runs", "has_text"}
    assert db.runs()["name"].to_list() == ["A", "B"]


@pytest.mark.slow
def test_judge_evaluate_compare_through_the_front_door(db: jp.Database) -> None:
    with FakeOpenAI() as fake:
        report = db.judge("openai/fake-model", api_base=fake.api_base, canaries=0)
        assert fake.calls == 6  # 7 requests, 6 distinct texts; c9 has no text
    assert report.outcomes == {"ok": 7, "no_text": 1}
    # c9 has no text: it stays a hole of A's q2 (2 of its 3 docs judged)
    assert report.judged["judged_after"].to_list() == pytest.approx([(1 + 2 / 3 + 1) / 3, 1.0])
    labels = db.labels(source="judge", effective=True)
    assert dict(zip(labels["doc_id"], labels["grade"], strict=True)) == EXPECTED

    ev = db.evaluate(measures=["nDCG@10", "RR@10", "Judged@10"], resamples=500)
    assert ev.summary.columns == ["run", "measure", "mean", "ci_low", "ci_high", "n", "engine"]
    assert ev.summary.height == 6
    assert ev.per_query.columns == ["run", "qid", "measure", "value"]
    rr = ev.per_query.filter((pl.col("run") == "A") & (pl.col("measure") == "RR@10"))
    assert dict(zip(rr["qid"], rr["value"], strict=True)) == {"q1": 1.0, "q2": 1.0, "q3": 1.0}

    cmp = db.compare("A", "B", gate=0.85, resamples=500)  # A: 0.889 (c9 has no text)
    assert cmp.deltas.columns[:4] == ["baseline", "candidate", "measure", "n"]
    assert cmp.deltas["measure"].to_list() == ["nDCG@10", "R(rel=3)@10", "nR@10"]
    assert cmp.refused.height == 0 and not cmp.unreliable


def test_the_gate_refuses_with_the_cli_s_exception(db: jp.Database) -> None:
    with pytest.raises(jp.errors.GateRefusedError) as caught:
        db.compare("A", ["B"])
    assert caught.value.exit_code == 3
    refused = caught.value.comparison.refused
    assert refused["run"].to_list() == ["A", "B"]
    forced = db.compare("A", ["B"], force=True, resamples=200)
    assert forced.unreliable and forced.deltas["unreliable"].all()


@pytest.mark.slow
def test_judge_inside_a_running_event_loop(db: jp.Database) -> None:
    """Jupyter runs cells inside an event loop: the sync call still works, and so does await."""

    async def notebook_cell(fake: FakeOpenAI) -> tuple[jp.JudgeReport, jp.JudgeReport]:
        asyncio.get_running_loop()  # as in a notebook cell: a loop is running
        first = db.judge("openai/fake-model", api_base=fake.api_base, runs="A", canaries=0)
        second = await db.ajudge("openai/fake-model", api_base=fake.api_base, canaries=0)
        return first, second

    with FakeOpenAI() as fake:
        first, second = asyncio.run(notebook_cell(fake))
        assert fake.calls == 5 + 1  # A's 5 texts, then c2 (c6's text was paid for via c5)
    assert first.holes == 6 and first.outcomes == {"ok": 5, "no_text": 1}
    assert second.holes == 3 and second.outcomes == {"ok": 2, "no_text": 1}
    assert second.stats is not None and second.stats.cached == 1


def test_export_and_errors(db: jp.Database, tmp_path: Path) -> None:
    out = db.export_qrels(tmp_path / "qrels.out.txt", source="human")
    assert out.read_text() == "q1 0 c4 0\nq2 0 c8 1\nq3 0 c11 1\n"
    with pytest.raises(jp.errors.UsageError, match="cannot use measure"):
        db.evaluate(measures=["Bogus@10"])
    with pytest.raises(jp.errors.UsageError, match="unknown run"):
        db.pool(runs=["nope"])


def test_dataframes_are_ingested_and_checked_like_files(tmp_path: Path) -> None:
    db = jp.open(tmp_path / "frames.duckdb")
    db.ingest_queries(pl.DataFrame({"qid": ["q1", "q2"], "text": ["boiling water", "hamlet"]}))
    db.ingest_docs(pl.DataFrame({"doc_id": ["d1", "d2", "d3"], "text": ["a", "b", None]}))
    db.ingest_run(
        pl.DataFrame(
            {"qid": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "score": [2.0, 1.0, 0.5]}
        ),
        name="bm25",
    )
    db.ingest_qrels(
        pl.DataFrame({"qid": ["q1", "q2"], "doc_id": ["d1", "d3"], "grade": [2, 0]}),
        labeller="assessors",
    )
    assert db.runs().select("name", "rows", "queries", "source_file").rows() == [
        ("bm25", 3, 2, "DataFrame")
    ]
    labels = db.labels()
    assert labels.select("qid", "doc_id", "grade", "labeller").rows() == [
        ("q1", "d1", 2, "assessors"),
        ("q2", "d3", 0, "assessors"),
    ]
    assert db.pool().summary["holes"].to_list() == [1]  # d2
    before = db.runs()
    # The same checks and errors as files, naming the DataFrame's row, and nothing written.
    typed = r"DataFrame: column .qid. holds DOUBLE values \(row 1: 1.5\): ids must be strings"
    with pytest.raises(jp.errors.InputError, match=typed):
        db.ingest_run(
            pl.DataFrame({"qid": [1.5, 2.5], "doc_id": ["a", "b"], "score": [1, 2]}), name="bad"
        )
    graded = r"DataFrame, row 2: grade 'high' is not an integer"
    with pytest.raises(jp.errors.InputError, match=graded):
        db.ingest_qrels(
            pl.DataFrame({"qid": ["q1", "q1"], "doc_id": ["x", "y"], "grade": ["1", "high"]}),
            labeller="h",
        )
    with pytest.raises(jp.errors.InputError, match="DataFrame has no rows"):
        db.ingest_run(pl.DataFrame({"qid": [], "doc_id": [], "score": []}), name="bm25")
    with pytest.raises(jp.errors.UsageError, match="no file name to take the run name"):
        db.ingest_run(pl.DataFrame({"qid": ["q1"], "doc_id": ["d1"], "score": [1.0]}))
    with pytest.raises(jp.errors.UsageError, match=r"cannot ingest a builtins\.list"):
        db.ingest_queries([("q1", "text")])  # type: ignore[arg-type]
    assert db.runs().equals(before)


def test_a_dataframe_without_a_labeller_or_a_name_says_how_to_give_one(tmp_path: Path) -> None:
    """Issue 22.11: the refusal's message (what a traceback shows) names the parameter."""
    import polars as pl

    db = jp.open(tmp_path / "api.duckdb")
    labels = pl.DataFrame({"qid": ["q1"], "doc_id": ["d1"], "grade": [2]})
    with pytest.raises(jp.errors.UsageError) as caught:
        db.ingest_qrels(labels)
    assert str(caught.value) == (
        "a DataFrame has no file name to take the labeller from: give it with labeller=NAME"
    )
    assert caught.value.hint == 'e.g. db.ingest_qrels(df, labeller="assessors-2024")'
    assert db.ingest_qrels(labels, labeller="assessors-2024").labels == 1
    with pytest.raises(jp.errors.UsageError, match=r"give it with name=NAME") as run:
        db.ingest_run(pl.DataFrame({"qid": ["q1"], "doc_id": ["d1"], "score": [1.0]}))
    assert run.value.hint == 'e.g. db.ingest_run(df, name="bm25")'
