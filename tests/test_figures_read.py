"""Figures that read right (issue 24.6), through the real commands and pages: bounds printed the
lower first, a p at the floor of the sign flips said as a bound (`< 0.0005`), a p just under
alpha not rounded onto it, no empty "significant" cell in the markdown or the HTML, no sentence
inside a CLI table row, and the per-query charts of the dashboard and the HTML report in one
order."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.metrics.corrected import Corrected
from judgepool.metrics.ppi import PPIEstimate
from judgepool.pooling.store.connection import Store
from judgepool.reports.sentences import p_value
from judgepool.ui.commands.corrected_table import corrected_means
from judgepool.ui.dashboard.compare_tables import fmt_bounds
from tests.ci_collection import write_collection, write_judge_labels
from tests.conftest import CliResult
from tests.dashboard_db import build, charts, open_page
from tests.test_corrected import audit

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
DB = "eval.duckdb"


def test_bounds_are_printed_the_lower_first(cli: Cli, write: Writer) -> None:
    # q1: one relevant doc at rank 1 and nine holes. Counted grade 0 the holes change nothing
    # (nDCG 1); counted grade 3 they raise the ideal ranking more than the run's gain: lower.
    holes = "".join(f"q1 Q0 h{i} {i + 1} {10 - i} r\n" for i in range(1, 10))
    run = write("r.trec", "q1 Q0 a 1 10 r\n" + holes + "q2 Q0 b 1 5 r\n")
    qrels = write("qrels.txt", "q1 0 a 1\nq2 0 b 2\n")
    assert cli("--db", DB, "ingest", "qrels", qrels).code == 0
    assert cli("--db", DB, "ingest", "run", run).code == 0
    done = cli("--db", DB, "eval", "--resamples", "100", "--format", "json")
    as_zero, as_top = json.loads(done.out)["runs"]["r"]["bounds"]["nDCG@10"]
    assert as_zero == 1.0 and as_top < as_zero  # the case: counting holes relevant lowers it
    table = cli("--db", DB, "eval", "--resamples", "100").out
    (row,) = [line for line in table.splitlines() if line.startswith("r ") and " .. " in line]
    assert f"{as_top:.3f} .. {as_zero:.3f}" in row
    assert "the lower first" in table
    for low, high in re.findall(r"(\d\.\d{3}) \.\. (\d\.\d{3})", table):
        assert float(low) <= float(high), row
    # The dashboard's means table says the same.
    assert fmt_bounds((as_zero, as_top)) == f"{as_top:.3f} .. {as_zero:.3f}"
    assert fmt_bounds((None, 1.0)) == "– .. 1.000"


def test_p_values_read_as_what_they_are() -> None:
    # The floor of 10,000 sign flips, 1/10001, is a bound; the next value up is a value.
    assert p_value(1 / 10_001, 10_000) == "< 0.0001"
    assert p_value(2 / 10_001, 10_000) == "0.0002"
    # Holm-adjusted from a floor p: a bound too, rounded up.
    assert p_value(6 / 2001, 2000, raw=1 / 2001) == "< 0.0030"
    # Just under alpha: the digits that keep it there; just over: four digits say it.
    assert p_value(100 / 2001, 2000, alpha=0.05) == "0.04998"
    assert p_value(0.05004, 2000, alpha=0.05) == "0.0500"
    assert p_value(None, 2000) == p_value(float("nan"), 2000) == "–"


@pytest.fixture
def collection(tmp_path: Path, cli: Cli) -> Path:
    files = write_collection(tmp_path)
    for args in (
        ("ingest", "queries", files["topics"]),
        ("ingest", "qrels", files["qrels"]),
        ("ingest", "run", files["base"], files["cand"], files["better"]),
    ):
        assert cli("--db", DB, *args).code == 0
    write_judge_labels(tmp_path / DB)
    return tmp_path / DB


def test_a_p_at_the_floor_of_the_sign_flips_is_a_bound(collection: Path, cli: Cli) -> None:
    args = ("--db", DB, "compare", "base", "better", "--resamples", "2000")
    figures = json.loads(cli(*args, "--format", "json").out)["comparisons"]
    assert {c["p"] for c in figures} == {1 / 2001}  # no flip was as extreme: the floor
    table = cli(*args).out
    rows = [line for line in table.splitlines() if line.startswith("better ") and "] " in line]
    rows = [row for row in rows if row.split()[2] == "30"]  # the differences: n = 30
    assert len(rows) == 3
    for row in rows:  # p and p(Holm) (x 3 tests), both bounds
        assert re.search(r"\]\s+< 0\.0005\s+< 0\.0015\s+yes$", row), row
    markdown = cli(*args, "--format", "markdown").out
    assert "p(Holm) \\< 0.0015" in markdown and "| < 0.0015 | ▲ better |" in markdown
    assert "0.0015 |" not in markdown.replace("< 0.0015 |", "")


class _Cells(HTMLParser):
    """The rows of every <table>, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def _significant_cells(tables: list[list[list[str]]]) -> list[str]:
    found = []
    for rows in tables:
        if rows and "significant" in rows[0]:
            at = rows[0].index("significant")
            found += [row[at] for row in rows[1:]]
    return found


def test_no_significant_cell_is_empty(collection: Path, cli: Cli, tmp_path: Path) -> None:
    args = ("--db", DB, "compare", "base", "cand", "better", "--resamples", "2000", "--by", "group")
    markdown = cli(*args, "--format", "markdown").out
    tables: list[list[list[str]]] = []
    for block in re.findall(r"((?:^\|.*\|\n)+)", markdown, flags=re.M):
        lines = [line for line in block.splitlines() if not line.startswith("|---")]
        tables.append([[c.strip() for c in line.strip("|").split(" | ")] for line in lines])
    cells = _significant_cells(tables)
    assert len(cells) == 6 + 30  # the differences and the groups
    assert set(cells) == {"▲ better", "▼ worse", "no"}
    out = tmp_path / "report.html"
    assert (
        cli("--db", DB, "report", "base", "cand", "better", "--by", "group", "--html", out).code
        == 0
    )
    parser = _Cells()
    parser.feed(out.read_text(encoding="utf-8"))
    cells = _significant_cells(parser.tables)
    assert len(cells) == 6 + 30
    assert set(cells) == {"▲ better", "▼ worse", "no"}


def test_a_reason_is_a_note_under_the_table_not_a_cell(
    cli: Cli, write: Writer, store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    """A figure without a corrected interval gives a reason of up to ~150 characters: the row
    says `none, note 1` and the sentence is said once under the table. The reasons a figure can
    have (no doc at the measure's threshold, nothing varying across a small audit) depend on the
    data, so one real evaluation's two entries are given one of them."""
    audit(store, cli, write, 3, {"q3": 1, "q4": 0, "q2": 3})
    ev = jp.open(store.path).evaluate(["base", "cand"], resamples=200).result
    assert ev.corrected is not None
    reason = (
        "no query has a doc at the measure's threshold, by the judge's labels or the audit's: "
        "the figure is not defined"
    )
    means = dict(ev.corrected.means)
    for key in (("base", "R(rel=3)@10"), ("cand", "R(rel=3)@10")):
        means[key] = Corrected(PPIEstimate(None, None, None, 3, 6, 0.05, reason))
    ev = replace(ev, corrected=replace(ev.corrected, means=means))
    capsys.readouterr()
    corrected_means(ev)
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("run   measure  "))
    table = []
    for line in lines[start:]:
        if not line.startswith(("run ", "---", "base ", "cand ")):
            break
        table.append(line)
    assert [line for line in lines if line.startswith("note ")] == [f"note 1: {reason}"]
    uncorrected = [row for row in table if row.rstrip().endswith("none, note 1")]
    assert len(uncorrected) == 2, table
    assert len(table) == 2 + 6, table  # the header, its rule and 2 runs x 3 measures
    assert all(len(row) < 100 for row in table), table


@pytest.fixture
def store(write: Writer) -> Store:
    return build(Store(), write)


def test_the_per_query_charts_share_one_order(store: Store, cli: Cli, tmp_path: Path) -> None:
    at = open_page("compare")
    ((spec, rows),) = charts(at)
    dashboard = [r["qid"] for r in rows]
    assert spec["encoding"]["x"]["sort"] == dashboard  # drawn in the rows' order
    deltas = [r["delta"] for r in rows]
    assert deltas == sorted(deltas, reverse=True) and deltas[0] > 0 > deltas[-1]
    out = tmp_path / "report.html"
    assert cli("report", "base", "cand", "--html", out).code == 0
    html = out.read_text(encoding="utf-8")
    chart = html[html.index("cand - base, nDCG@10, per query") :]
    chart = chart[: chart.index("</svg>")]
    drawn = re.findall(r"<title>query (\S+): [+-]", chart)
    nonzero = [r["qid"] for r in rows if abs(r["delta"]) > 1e-12]  # a tie draws no bar
    assert drawn == nonzero
