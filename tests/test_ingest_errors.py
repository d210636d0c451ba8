"""Malformed input: a clear error naming file and line, a non-zero exit, the database untouched."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt
from tests.ingest_helpers import GOOD_RUN, small_database, snapshot


@pytest.fixture
def populated(
    cli: Callable[..., CliResult], write: Callable[[str, str | bytes], Path], prebuilt: Prebuilt
) -> Path:
    """A database holding one run, qrels, queries and docs."""
    return small_database(cli, write, prebuilt)


def _big_run_with_bad_line(bad_line: int, total: int) -> str:
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100}.5 big" for i in range(total)]
    lines[bad_line - 1] = lines[bad_line - 1].replace(".5 big", ".5x big")
    return "\n".join(lines) + "\n"


# (kind, file name, content, expected line or None, text the message must contain, extra args)
CASES: list[tuple[str, str, str | bytes, int | None, str, tuple[str, ...]]] = [
    ("run", "cols5.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0\n", 2, "expected 6", ()),
    ("run", "cols7.trec", "q1 Q0 d1 1 2.0 t extra\n", 1, "found 7", ()),
    (
        "run",
        "score.trec",
        "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3 high t\n",
        3,
        "'high' is not a C float (trec_eval would read it as 0)",
        (),
    ),
    ("run", "nan.trec", "q1 Q0 d1 1 nan t\n", 1, "NaN", ()),
    (
        "run",
        "dup.trec",
        "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n",
        3,
        "appears twice for query 'q1' (first on line 1)",
        (),
    ),
    ("run", "empty.trec", "", None, "empty", ()),
    ("run", "blank.trec", "\n\n  \n", None, "no entries", ()),
    ("run", "utf8.trec", b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xff2 2 1.0 t\n", 2, "invalid UTF-8", ()),
    # Columns are split on ASCII whitespace as trec_eval does: a no-break space stays in the id.
    ("run", "nbsp.trec", "q1 Q0 d\u00a01 1 2.0 t\n", 1, "contains whitespace", ()),
    (
        "run",
        "late.trec",
        _big_run_with_bad_line(4321, 6000),
        4321,
        "score '980.5x' is not a C float",
        (),
    ),
    ("run", "mystery.xyz", "hello world\n", None, "cannot tell the format", ()),
    ("run", "broken.trec.gz", gzip.compress(GOOD_RUN.encode())[:25], None, "cannot be read", ()),
    (
        "run",
        "bad.jsonl",
        '{"qid": "q1", "doc_id": "d1", "score": 1}\n{"qid": "q1", "doc_id"\n',
        2,
        "invalid JSON",
        (),
    ),
    ("run", "noscore.jsonl", '{"qid": "q1", "doc_id": "d1"}\n', 1, "no 'score' key", ()),
    (
        "run",
        "listid.jsonl",
        '{"qid": ["q1"], "doc_id": "d1", "score": 1}\n',
        1,
        "must be a string",
        (),
    ),
    (
        "run",
        "spaceid.jsonl",
        '{"qid": "q 1", "doc_id": "d1", "score": 1}\n',
        1,
        "contains whitespace",
        (),
    ),
    ("run", "good2.trec", GOOD_RUN, None, "run name 'bad name'", ("--name", "bad name")),
    ("qrels", "grade.qrels", "q1 0 d1 1\nq1 0 d2 1.5\n", 2, "grade '1.5' is not an integer", ()),
    ("qrels", "hexgrade.qrels", "q1 0 d1 0x1\n", 1, "is not an integer", ()),
    ("qrels", "cols3.qrels", "q1 0 d1\n", 1, "expected 4", ()),
    ("qrels", "dup.qrels", "q1 0 d1 1\nq1 0 d1 2\n", 2, "appears twice", ()),
    ("queries", "notab.tsv", "q1\tfine\nq2 no tab here\n", 2, "no tab", ()),
    ("queries", "emptytext.tsv", "q1\t   \n", 1, "empty text", ()),
    ("queries", "dupq.tsv", "q1\ta\nq1\tb\n", 2, "appears twice (first on line 1)", ()),
    ("docs", "notext.jsonl", '{"doc_id": "d1", "title": "t"}\n', 1, "no passage text", ()),
    (
        "docs",
        "dupdoc.jsonl",
        '{"id": "d1", "text": "a"}\n{"docid": "d1", "text": "b"}\n',
        2,
        "appears twice",
        (),
    ),
    ("docs", "array.jsonl", "[1, 2]\n", 1, "expected a JSON object", ()),
    ("docs", "missing.jsonl", None, None, "no such file", ()),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("kind", "name", "content", "line", "needle", "extra"),
    CASES,
    ids=[f"{c[0]}-{c[1]}" for c in CASES],
)
def test_malformed_input_is_refused_and_changes_nothing(
    populated: Path,
    cli: Callable[..., CliResult],
    write: Callable[[str, str | bytes], Path],
    tmp_path: Path,
    kind: str,
    name: str,
    content: str | bytes | None,
    line: int | None,
    needle: str,
    extra: tuple[str, ...],
) -> None:
    before = snapshot(populated)
    path = write(name, content) if content is not None else tmp_path / name
    result = cli("ingest", kind, path, *extra)
    assert result.code == 2, result
    assert result.err.startswith("error: "), result.err
    assert needle in result.err, result.err
    if "--name" not in extra:
        assert str(path) in result.err
    if line is not None:
        assert f"line {line}:" in result.err
    assert "Traceback" not in result.err
    # Every refusal ends with what to do: `error: problem — what to do`.
    assert " — " in result.err.splitlines()[0], result.err
    assert snapshot(populated) == before


def test_parquet_without_score_column_is_refused(
    populated: Path, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1"], "doc_id": ["d1"]}), path)
    before = snapshot(populated)
    result = cli("ingest", "run", path)
    assert result.code == 2
    assert "missing column(s) score" in result.err
    assert snapshot(populated) == before


def test_parquet_duplicate_pair_names_rows(
    populated: Path, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "dup.parquet"
    pq.write_table(
        pa.table({"qid": ["q1", "q1", "q1"], "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]}),
        path,
    )
    result = cli("ingest", "run", path)
    assert result.code == 2
    assert "row 3: doc 'a' appears twice for query 'q1' (first: row 1)" in result.err


def test_debug_variable_shows_the_traceback(
    cli: Callable[..., CliResult],
    write: Callable[[str, str | bytes], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write("bad.trec", "q1 Q0 d1 1\n")
    assert "Traceback" not in cli("ingest", "run", path).err
    monkeypatch.setenv("JUDGEPOOL_DEBUG", "1")
    result = cli("ingest", "run", path)
    assert result.code == 2
    assert "Traceback" in result.err and "InputError" in result.err
