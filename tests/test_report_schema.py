"""The JSON report has one published shape: docs/report.schema.json, made from the pydantic models
of judgepool/reports/model.py; what `eval` and `compare` print validates against the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema

import judgepool as jp
from tests.conftest import REPO, CliResult
from tests.report_shape import check_report_text
from tests.scripts import script

Cli = Callable[..., CliResult]
Writer = Callable[[str, str], Path]
SCHEMA = REPO / "docs" / "report.schema.json"


def _maker() -> object:
    return script(SCHEMA.with_name("make_report_schema.py"))


def test_the_published_schema_is_what_the_models_say() -> None:
    made = _maker().schema_text()  # type: ignore[attr-defined]
    assert SCHEMA.read_text(encoding="utf-8") == made, (
        "docs/report.schema.json is stale: run .venv/bin/python docs/make_report_schema.py"
    )


def test_eval_and_compare_json_validate_against_the_published_schema(
    cli: Cli, write: Writer
) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    a = write("a.trec", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d3 1 1 a\nq2 Q0 d9 2 0 a\n")
    b = write("b.trec", "q1 Q0 d2 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 d3 1 1 b\n")
    qrels = write("qrels.txt", "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 0\n")
    for args in (("ingest", "run", a), ("ingest", "run", b), ("ingest", "qrels", qrels)):
        assert cli(*args).code == 0
    reports = [
        cli("eval", "--format", "json", "--measure", "nDCG@10", "--measure", "RR@10"),
        cli("compare", "a", "b", "--format", "json"),  # refused: a has a hole
        cli("compare", "a", "b", "--format", "json", "--force", "--average", "trec_eval"),
    ]
    assert [r.code for r in reports] == [0, 3, 0]
    for done in reports:
        report = json.loads(done.out)
        jsonschema.validate(report, schema)
    assert json.loads(reports[1].out)["refused"][0]["run"] == "a"
    assert json.loads(reports[2].out)["comparisons"]


def test_the_library_json_is_the_report_the_models_make(cli: Cli, write: Writer) -> None:
    """`.to_json()` of the library's results: the same shape, no model run (tests/report_shape)."""
    run = write("a.trec", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d3 1 1 a\n")
    other = write("b.trec", "q1 Q0 d2 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 d3 1 1 b\n")
    qrels = write("qrels.txt", "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 0\n")
    db = jp.open("eval.duckdb")
    db.ingest_qrels(qrels)
    db.ingest_run(run, name="a")
    db.ingest_run(other, name="b")
    for found in (db.evaluate(resamples=50), db.compare("a", "b", resamples=50)):
        check_report_text(json.dumps(found.to_json()))  # numpy scalars would not even print
