"""Inputs that used to load wrongly are refused with the file, the line (or row) and what to do.

Empty inputs of every format, ids with control characters, scores that are not C floats, grades
beyond 32 bits, Parquet and JSONL columns of the wrong type, and files of another kind given to
the wrong command. Each refusal leaves the database byte-identical (its table digests).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt
from tests.ingest_helpers import small_database, snapshot

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


@pytest.fixture
def db(cli: Cli, write: Writer, prebuilt: Prebuilt) -> Path:
    """A database holding one run 'good', qrels, queries and docs."""
    return small_database(cli, write, prebuilt)


def refused(cli: Cli, db: Path, *args: Any) -> str:
    """Run an ingest that must be refused; return its error line after checking the contract."""
    before = snapshot(db)
    result = cli("ingest", *args)
    assert result.code == 2, result
    first = result.err.splitlines()[0]
    assert first.startswith("error: "), result.err
    assert " — " in first, f"no 'what to do' in: {first}"
    assert "Traceback" not in result.err and "bug" not in result.err, result.err
    assert snapshot(db) == before
    return first


# (kind, file name, content, expected line or None, text the message must contain)
EMPTY: list[tuple[str, str, str | bytes, str]] = [
    ("run", "comments.trec", "# produced by bm25\n\n# nothing else\n", "no entries"),
    ("run", "empty.trec.gz", gzip.compress(b""), "no entries"),
    ("run", "blank.trec.gz", gzip.compress(b"\n \n\t\n"), "no entries"),
    ("run", "blank.jsonl", "\n  \n", "no entries"),
    ("qrels", "comments.qrels", "# judged by nobody\n", "no entries"),
    ("qrels", "empty.qrels.gz", gzip.compress(b""), "no entries"),
    ("qrels", "blank.jsonl", "\n\n", "no entries"),
    ("queries", "blank.tsv", "\n \n", "no entries"),
    ("queries", "blank.jsonl", "\n", "no entries"),
    ("queries", "empty.tsv.gz", gzip.compress(b""), "no entries"),
    ("docs", "blank.jsonl", "\n\n", "no entries"),
    ("docs", "header-only.tsv", "doc_id\ttext\n", "no entries"),
    ("docs", "empty.jsonl.gz", gzip.compress(b""), "no entries"),
]


@pytest.mark.parametrize(("kind", "name", "content", "needle"), EMPTY, ids=[e[1] for e in EMPTY])
def test_empty_inputs_of_every_format_are_refused(
    db: Path, cli: Cli, write: Writer, kind: str, name: str, content: str | bytes, needle: str
) -> None:
    path = write(name, content)
    message = refused(cli, db, kind, path)
    assert str(path) in message and needle in message


def _parquet(path: Path, columns: dict[str, Any]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


def test_an_empty_parquet_run_does_not_replace_a_run(db: Path, cli: Cli, tmp_path: Path) -> None:
    import pyarrow as pa

    path = _parquet(
        tmp_path / "empty.parquet",
        {
            "qid": pa.array([], pa.string()),
            "doc_id": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()),
        },
    )
    message = refused(cli, db, "run", path, "--name", "good")
    assert "no rows" in message
    assert "good" in cli("runs").out


PARQUET_TYPES: list[tuple[str, dict[str, list[Any]], str]] = [
    ("float-qid", {"qid": [1.0, 2.0], "doc_id": ["a", "b"], "score": [1.0, 2.0]}, "'qid'"),
    ("list-qid", {"qid": [["q1"], ["q2"]], "doc_id": ["a", "b"], "score": [1.0, 2.0]}, "'qid'"),
    ("float-doc", {"qid": ["q1", "q1"], "doc_id": [1.5, 2.5], "score": [1.0, 2.0]}, "'doc_id'"),
    ("bool-score", {"qid": ["q1", "q1"], "doc_id": ["a", "b"], "score": [True, False]}, "'score'"),
    ("text-score", {"qid": ["q1", "q1"], "doc_id": ["a", "b"], "score": ["1", "2"]}, "'score'"),
]


@pytest.mark.parametrize(
    ("columns", "needle"), [p[1:] for p in PARQUET_TYPES], ids=[p[0] for p in PARQUET_TYPES]
)
def test_parquet_columns_are_checked_not_converted(
    db: Path, cli: Cli, tmp_path: Path, columns: dict[str, list[Any]], needle: str
) -> None:
    message = refused(cli, db, "run", _parquet(tmp_path / "typed.parquet", columns))
    assert f"column {needle}" in message and "row 1" in message


def test_parquet_integer_ids_are_their_decimal_form(cli: Cli, tmp_path: Path) -> None:
    import pyarrow as pa

    path = _parquet(
        tmp_path / "ints.parquet",
        {
            "qid": pa.array([1101, 1101], pa.int64()),
            "docid": pa.array([7, 12], pa.int32()),
            "score": pa.array([2, 1], pa.int16()),
        },
    )
    assert cli("ingest", "run", path).code == 0
    from judgepool.pooling.store.connection import Store

    with Store().read() as con:
        got = con.execute("SELECT qid, doc_id, score, rank FROM run_rows ORDER BY rank").fetchall()
    assert got == [("1101", "7", 2.0, 1), ("1101", "12", 1.0, 2)]


def test_parquet_bad_value_names_its_row(db: Path, cli: Cli, tmp_path: Path) -> None:
    path = _parquet(
        tmp_path / "ctl.parquet",
        {"qid": ["q1", "q1", "q1"], "doc_id": ["a", "b", "c\x1bd"], "score": [3.0, 2.0, 1.0]},
    )
    message = refused(cli, db, "run", path)
    assert "row 3" in message and "control character" in message


JSONL_TYPES: list[tuple[str, str, str, str]] = [
    ("run", "float-qid", '{"qid": 1.0, "doc_id": "d1", "score": 1}', "qid"),
    ("run", "bool-score", '{"qid": "q1", "doc_id": "d1", "score": true}', "score"),
    ("run", "list-score", '{"qid": "q1", "doc_id": "d1", "score": [1]}', "score"),
    ("run", "bool-doc", '{"qid": "q1", "doc_id": false, "score": 1}', "doc id"),
    ("qrels", "float-grade", '{"qid": "q1", "doc_id": "d1", "grade": 1.0}', "grade"),
    ("qrels", "bool-grade", '{"qid": "q1", "doc_id": "d1", "grade": true}', "grade"),
    ("queries", "float-qid", '{"qid": 3.5, "text": "a query"}', "qid"),
    ("docs", "list-id", '{"doc_id": ["d1"], "text": "a passage"}', "doc id"),
]


@pytest.mark.parametrize(
    ("kind", "line", "needle"),
    [(j[0], j[2], j[3]) for j in JSONL_TYPES],
    ids=[f"{j[0]}-{j[1]}" for j in JSONL_TYPES],
)
def test_jsonl_fields_are_checked_not_converted(
    db: Path, cli: Cli, write: Writer, kind: str, line: str, needle: str
) -> None:
    path = write(f"typed-{kind}.jsonl", f"{line}\n")
    message = refused(cli, db, kind, path)
    assert f"{path}, line 1:" in message and needle in message


CONTROL = [
    ("nul", "q1 Q0 d\x001 1 2.0 t\n", "U+0000"),
    ("bel", "q1 Q0 d1 1 2.0 t\nq\x07 Q0 d2 2 1.0 t\n", "U+0007"),
    ("esc", "q1 Q0 \x1b[31md1 1 2.0 t\n", "U+001B"),
    ("c1", "q1 Q0 d\u00851 1 2.0 t\n", "U+0085"),
    ("del", "q1 Q0 d\x7f1 1 2.0 t\n", "U+007F"),
]


@pytest.mark.parametrize(("content", "code"), [c[1:] for c in CONTROL], ids=[c[0] for c in CONTROL])
def test_control_characters_in_ids_are_refused_with_the_line(
    db: Path, cli: Cli, write: Writer, content: str, code: str
) -> None:
    message = refused(cli, db, "run", write("ctl.trec", content))
    line = 2 if content.startswith("q1 Q0 d1 1") else 1
    assert f"line {line}:" in message and "control character" in message and code in message


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("qrels", "q1 0 d\x07 1\n"),
        ("queries", "q\x1b1\tsome query\n"),
        ("docs", '{"doc_id": "d\\u0000", "text": "x"}\n'),
        ("docs", '{"doc_id": "d1", "parent_id": "p\\u0007", "text": "x"}\n'),
    ],
)
def test_control_characters_are_refused_in_every_kind_of_file(
    db: Path, cli: Cli, write: Writer, kind: str, content: str
) -> None:
    suffix = {"qrels": "qrels", "queries": "tsv", "docs": "jsonl"}[kind]
    message = refused(cli, db, kind, write(f"ctl.{suffix}", content))
    assert "line 1:" in message and "control character" in message


NOT_C_FLOATS = [
    ("1_000", "1"),  # Python's float() reads 1000; C's strtod stops at the underscore
    ("1.5x", "1.5"),
    ("1e", "1"),
    ("\u0661\u0662", "0"),  # Arabic-Indic digits: float() reads 12
    ("0x", "0"),
    ("--1", "0"),
]


@pytest.mark.parametrize(("score", "atof"), NOT_C_FLOATS, ids=[s for s, _ in NOT_C_FLOATS])
def test_scores_that_are_not_c_floats_are_refused(
    db: Path, cli: Cli, write: Writer, score: str, atof: str
) -> None:
    message = refused(cli, db, "run", write("s.trec", f"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 {score} t\n"))
    assert "line 2:" in message and f"score {score!r} is not a C float" in message
    assert f"trec_eval would read it as {atof}" in message


def test_jsonl_text_scores_follow_the_same_rule(db: Path, cli: Cli, write: Writer) -> None:
    path = write("s.jsonl", '{"qid": "q1", "doc_id": "d1", "score": "1_000"}\n')
    assert "not a C float" in refused(cli, db, "run", path)


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("q1 0 d1 1\nq1 0 d2 99999999999\n", 2),
        ("q1 0 d1 -2147483649\n", 1),
    ],
)
def test_grades_beyond_32_bits_are_refused_with_the_line(
    db: Path, cli: Cli, write: Writer, content: str, line: int
) -> None:
    message = refused(cli, db, "qrels", write("big.qrels", content))
    assert f"line {line}:" in message and "32-bit" in message


def test_jsonl_grades_beyond_32_bits_are_refused(db: Path, cli: Cli, write: Writer) -> None:
    path = write("big.jsonl", '{"qid": "q1", "doc_id": "d1", "grade": 4294967296}\n')
    message = refused(cli, db, "qrels", path)
    assert "line 1:" in message and "32-bit" in message


WRONG_KIND: list[tuple[str, str, str, str]] = [
    ("run", "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n", "qrels"),
    ("qrels", "bm25.txt", "q1 Q0 d1 1 12.5 bm25\n", "run"),
    # A topics file and a TSV of passages look alike: the hint names both commands.
    ("run", "topics.tsv", "q1\twhat is a pool\n", "queries or docs"),
    ("docs", "topics.jsonl", '{"qid": "q1", "query": "what is a pool"}\n', "queries"),
    ("queries", "docs.jsonl", '{"doc_id": "d1", "text": "a passage"}\n', "docs"),
    ("run", "qrels.jsonl", '{"qid": "q1", "doc_id": "d1", "grade": 2}\n', "qrels"),
    ("qrels", "run.jsonl", '{"qid": "q1", "doc_id": "d1", "score": 2.5}\n', "run"),
    ("run", "docs.jsonl", '{"doc_id": "d1", "text": "a passage"}\n', "docs"),
]


@pytest.mark.parametrize(
    ("given", "name", "content", "actual"),
    WRONG_KIND,
    ids=[f"{w[1]}-to-{w[0]}" for w in WRONG_KIND],
)
def test_a_file_of_another_kind_is_sent_to_its_command(
    db: Path, cli: Cli, write: Writer, given: str, name: str, content: str, actual: str
) -> None:
    message = refused(cli, db, given, write(name, content))
    assert f"this looks like a {actual} file" in message
    assert f"judgepool ingest {actual.split()[0]}" in message


def test_a_parquet_run_given_to_ingest_qrels_is_sent_to_ingest_run(
    db: Path, cli: Cli, tmp_path: Path
) -> None:
    path = _parquet(tmp_path / "run.parquet", {"qid": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    message = refused(cli, db, "qrels", path)
    assert "this looks like a run file" in message and "judgepool ingest run" in message


@pytest.mark.parametrize("kind", ["qrels", "queries", "docs"])
def test_a_parquet_file_with_no_rows_is_not_sent_to_another_command(
    db: Path, cli: Cli, tmp_path: Path, kind: str
) -> None:
    """Issue 22.11: a 0-row Parquet given to `ingest qrels` was told it "looks like a run file"
    (whose command then refuses it for having no rows). It is said as it is: Parquet is not a
    qrels format, and this file has no rows."""
    import pyarrow as pa

    empty = pa.array([], pa.string())
    path = _parquet(tmp_path / "empty.parquet", {"qid": empty, "doc_id": empty, "score": empty})
    message = refused(cli, db, kind, path)
    assert "looks like" not in message and "judgepool ingest run" not in message
    assert f"a Parquet file is not one of the {kind} formats (and this one has no rows)" in message
