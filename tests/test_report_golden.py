"""The markdown and HTML reports: golden files, made from the fixed-seed collection of
tests/ci_collection.py through the real commands; the HTML opened in headless Chromium with no
console error and no request but the file itself; the output guard; the exit codes of `report`.

The golden files are tests/golden/*; after a deliberate change of the reports, write them again
with `JUDGEPOOL_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/test_report_golden.py` and read
the diff before committing it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from tests.ci_collection import ingest_with_holey
from tests.conftest import REPO, CliResult
from tests.dashboard_browser import find_chromium
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
DB = "eval.duckdb"
GOLDEN = REPO / "tests" / "golden"
OPTIONS = ("--by", "group", "--resamples", "2000")


@pytest.fixture
def db(tmp_path: Path, cli: Cli, prebuilt: Prebuilt) -> Path:
    def build() -> None:
        holey = "".join(f"q{i:02d} Q0 new-{i} 1 1 holey\n" for i in range(1, 31))
        ingest_with_holey(tmp_path, cli, DB, holey)

    prebuilt(build)
    return tmp_path / DB


def _golden(name: str, made: str) -> None:
    path = GOLDEN / name
    if os.environ.get("JUDGEPOOL_WRITE_GOLDEN") == "1":
        path.write_text(made, encoding="utf-8")
    assert made == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def test_markdown_report_golden(db: Path, cli: Cli) -> None:
    done = cli(
        "--db",
        DB,
        "compare",
        "base",
        "cand",
        "better",
        *OPTIONS,
        "--fail-on",
        "regression",
        "--format",
        "markdown",
    )
    assert done.code == 4, done.err
    lines = done.out.splitlines()
    assert lines[0] == (
        "**judgepool compare: cand: worse; better: better** (cand, better against baseline base)"
    )
    assert "judge (openai/gpt-4o-mini@relevance-v1)" in done.out and "human (qrels.txt)" in done.out
    assert (
        "judgepool --db eval.duckdb compare base cand better --level chunk --resamples 2000 "
        "--by group --fail-on regression --format markdown"
    ) in lines
    _golden("compare.md", done.out)
    again = cli(
        "--db",
        DB,
        "compare",
        "base",
        "cand",
        "better",
        *OPTIONS,
        "--fail-on",
        "regression",
        "--format",
        "markdown",
    )
    assert again.out == done.out  # deterministic


def test_refused_markdown_says_why_first(db: Path, cli: Cli) -> None:
    done = cli("--db", DB, "compare", "base", "holey", "--format", "markdown")
    assert done.code == 3
    assert done.out.startswith(
        "**judgepool compare: refused** (holey against baseline base)\n\n- 1 run under the "
        "judged@10 gate of 0.9 (holey: judged@10 0.000, 30 holes)\n- fill the holes with: "
        "judgepool --db eval.duckdb judge --depth 10 --run holey --model MODEL\n"
    )
    _golden("compare-refused.md", done.out)


def test_html_report_golden(db: Path, cli: Cli, tmp_path: Path) -> None:
    out, md = tmp_path / "report.html", tmp_path / "report.md"
    done = cli(
        "--db", DB, "report", "base", "cand", "better", *OPTIONS, "--html", out, "--markdown", md
    )
    assert done.code == 0, done.err
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "http://" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert html.count("<svg") == 1 + 2 * 3  # the runs, and 2 candidates x 3 measures
    assert (
        "judgepool --db eval.duckdb report base cand better --level chunk --resamples 2000 "
        "--by group --html report.html" in html
    )
    _golden("report.html", html)
    # The markdown file is what compare --format markdown prints (without --fail-on here).
    printed = cli(
        "--db", DB, "compare", "base", "cand", "better", *OPTIONS, "--format", "markdown"
    ).out
    assert md.read_text(encoding="utf-8") == printed
    assert (
        jp.open(DB).compare("base", ["cand", "better"], resamples=2000, by="group").to_html()
        == html
    )


@pytest.mark.slow
def test_html_report_in_a_real_browser(db: Path, cli: Cli, tmp_path: Path) -> None:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium on PATH (apt-get install -y chromium)")
    from tests.html_browser import load_file

    out = tmp_path / "report.html"
    assert cli("--db", DB, "report", "base", "cand", "better", *OPTIONS, "--html", out).code == 0
    page = load_file(browser, out)
    assert page.console == [], page.console
    assert page.requests == [out.resolve().as_uri()], page.requests  # the file, nothing else
    assert page.svgs == 7
    assert page.text.startswith("judgepool compare: cand: worse; better: better")
    assert "Per-query differences" in page.text and "By group" in page.text


def test_report_exit_codes_and_it_writes_a_refusal_too(db: Path, cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "refused.html"
    done = cli("--db", DB, "report", "base", "holey", "--html", out)
    assert done.code == 3 and "comparison refused" in done.err
    assert "judgepool compare: refused" in out.read_text(encoding="utf-8")
    failed = cli(
        "--db",
        DB,
        "report",
        "base",
        "cand",
        "--fail-on",
        "regression",
        "--resamples",
        "2000",
        "--markdown",
        tmp_path / "r.md",
    )
    assert failed.code == 4 and (tmp_path / "r.md").exists()
    assert cli("--db", DB, "report", "base", "cand").code == 2  # nothing to write


@pytest.mark.parametrize("target", ["database", "folder", "link", "duckdb"])
def test_report_never_writes_over_what_it_was_not_asked_to(
    db: Path, cli: Cli, tmp_path: Path, target: str
) -> None:
    other = tmp_path / "other.duckdb"
    other.write_bytes(db.read_bytes())
    (tmp_path / "keep.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "link.html").symlink_to(tmp_path / "keep.txt")
    (tmp_path / "folder").mkdir()
    path = {
        "database": db,
        "folder": tmp_path / "folder",
        "link": tmp_path / "link.html",
        "duckdb": other,
    }[target]
    before = db.read_bytes()
    done = cli("--db", DB, "report", "base", "cand", "--html", path)
    assert done.code == 2 and "refusing to write onto" in done.err and "--html" in done.err
    assert db.read_bytes() == before and (tmp_path / "keep.txt").read_text() == "keep"
    assert (tmp_path / "folder").is_dir() and other.read_bytes() == before


def test_names_are_shown_as_text_never_as_markup(cli: Cli, write: Callable[..., Path]) -> None:
    """A group or run name that looks like markup is escaped in both reports."""
    topics = write("t.tsv", "q1\tone\nq2\ttwo\n")
    groups = write("g.tsv", "q1\t<b>x</b>|*y*\nq2\t<b>x</b>|*y*\n")
    qrels = write("qrels.txt", "q1 0 a 2\nq1 0 b 0\nq2 0 c 2\nq2 0 d 0\n")
    for args in (
        ("ingest", "queries", topics, "--groups", groups),
        ("ingest", "qrels", qrels),
        (
            "ingest",
            "run",
            write("a.trec", "q1 Q0 a 1 2 a\nq1 Q0 b 2 1 a\nq2 Q0 c 1 1 a\n"),
            "--name",
            "<i>a</i>",
        ),
        ("ingest", "run", write("b.trec", "q1 Q0 b 1 2 b\nq2 Q0 d 1 1 b\n")),
    ):
        assert cli(*args).code == 0
    md = cli("compare", "<i>a</i>", "b", "--by", "group", "--format", "markdown").out
    assert "\\<b\\>x\\</b\\>\\|\\*y\\*" in md and "<b>" not in md
    assert "baseline \\<i\\>a\\</i\\>" in md  # (the command block quotes it for the shell)
    out = write("r.html", "")
    assert cli("report", "<i>a</i>", "b", "--by", "group", "--html", out).code == 0
    html = out.read_text(encoding="utf-8")
    assert "&lt;b&gt;x&lt;/b&gt;|*y*" in html and "<b>" not in html and "<i>" not in html
