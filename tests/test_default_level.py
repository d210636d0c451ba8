"""Without --level, every command works at the level that has labels, and says so (issue 11.13).

A re-chunking database has only doc-level labels: two chunks per document, a chunk run, qrels
for the documents. Before, the CLI defaulted to chunk level there: `pool` pooled 0 queries,
`eval` gave wrong advice and `export qrels` wrote an empty file with exit code 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

CHUNKS = [("q1-a1", "A"), ("q1-a2", "A"), ("q1-b1", "B"), ("q2-c1", "C"), ("q2-d1", "D")]
RUN = (
    "q1 Q0 q1-a1 1 9 r\nq1 Q0 q1-b1 2 8 r\nq1 Q0 q1-a2 3 7 r\n"
    "q2 Q0 q2-c1 1 9 r\nq2 Q0 q2-d1 2 8 r\n"
)
DOC_QRELS = "q1 0 A 3\nq1 0 B 0\nq2 0 C 2\n"
NOTE = "only doc-level labels in this database: working at --level doc"


@pytest.fixture
def doc_only(write: Writer, cli: Cli, prebuilt: Prebuilt) -> None:
    def build() -> None:
        docs = "".join(
            json.dumps({"doc_id": c, "text": c, "parent_id": p}) + "\n" for c, p in CHUNKS
        )
        assert cli("ingest", "docs", write("chunks.jsonl", docs)).code == 0
        assert cli("ingest", "run", write("r.trec", RUN)).code == 0
        assert cli("ingest", "qrels", write("doc.qrels", DOC_QRELS), "--level", "doc").code == 0

    prebuilt(build)


def test_pool_defaults_to_the_labelled_level_and_says_so(doc_only: None, cli: Cli) -> None:
    done = cli("pool")
    assert done.code == 0, done.err
    assert "doc level: 2 queries" in done.out
    assert done.err.count(NOTE) == 1 and len(done.err.splitlines()) == 1
    # Asked for explicitly, the level is taken as given, with no note.
    chunk = cli("pool", "--level", "chunk")
    assert "chunk level: 0 queries" in chunk.out and NOTE not in chunk.err


def test_eval_and_compare_default_to_doc(doc_only: None, cli: Cli) -> None:
    done = cli("eval", "--format", "json", "--resamples", "20")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["level"] == "doc" and report["queries"] == 2
    assert NOTE in done.err


def test_eval_at_an_unlabelled_level_points_at_the_labelled_one(doc_only: None, cli: Cli) -> None:
    done = cli("eval", "--level", "chunk")
    assert done.code == 2
    assert "no query has an effective label at the chunk level" in done.err
    assert "--level doc" in done.err  # not "ingest qrels": there are labels, at the other level


def test_export_writes_the_doc_labels(doc_only: None, cli: Cli) -> None:
    done = cli("export", "qrels", "-o", "out.qrels")
    assert done.code == 0, done.err
    assert Path("out.qrels").read_text() == DOC_QRELS
    assert NOTE in done.err


@pytest.mark.parametrize(
    ("args", "why", "fix"),
    [
        (("--level", "chunk"), "no effective chunk-level labels", "--level doc"),
        (("--source", "judge"), "no judge doc-level labels", "--source effective"),
        (
            ("--source", "judge", "--judge", "nobody"),
            "no judge doc-level labels of judge 'nobody'",
            "--source effective (3 labels)",
        ),
    ],
)
def test_an_export_of_nothing_is_refused_and_writes_nothing(
    doc_only: None, cli: Cli, args: tuple[str, ...], why: str, fix: str
) -> None:
    Path("kept.qrels").write_text("my old file\n")
    for output in (("-o", "kept.qrels"), ("-o", "new.qrels"), ()):
        done = cli("export", "qrels", *args, *output)
        assert done.code != 0, done.err
        assert why in done.err and "nothing to export" in done.err, done.err
        assert fix in done.err.split(" — ", 1)[1], done.err
        assert done.out == ""
    assert Path("kept.qrels").read_text() == "my old file\n" and not Path("new.qrels").exists()


def test_chunk_stays_the_default_where_chunks_are_labelled(
    doc_only: None, cli: Cli, write: Writer
) -> None:
    assert cli("ingest", "qrels", write("chunk.qrels", "q1 0 q1-a1 2\n")).code == 0
    done = cli("pool")
    assert "chunk level: 1 queries" in done.out and NOTE not in done.err
