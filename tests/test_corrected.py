"""`compare` and `eval` with judge labels among the effective labels: the judge-corrected estimate
and interval of every difference and mean, the verdict, and what is said before an audit.

The figures are checked against an independent computation: f = the per-query values of a copy
of the database with every human label of a judge-labelled pair removed (so the judge's labels
are the effective ones there: the judge's view), Y = the values with the audit's human labels,
both handed to metrics.ppi_ratio.corrected_ratio on the audited queries' positions with the
queries each measure averages on either side (issue 21: the ratio estimator corrects which queries
count as well as their values).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import judgepool as jp
from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.ppi_ratio import RatioEstimate, corrected_ratio
from judgepool.pooling.audit.samples import latest_sample
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
MEASURES = ("nDCG@10", "R(rel=3)@10", "nR@10")
SEED = "1"  # draws q4 among 3 of q1..q4 (asserted where used)


def audit(store: Store, cli: Cli, write: Writer, queries: int, grades: dict[str, int]) -> list[str]:
    """Draw `queries` queries with seed 2 (q3 q4 q2 q5 q6 q1 in that order) and give the d10 of
    each sampled query in `grades` a human grade."""
    assert cli("audit", "sample", "--queries", str(queries), "--seed", "2").code == 0
    sample = latest_sample(store, "chunk")
    assert sample is not None
    chosen = list(sample.qids[: len(grades)])
    lines = [f"{q} 0 {q}-d10 {grades[q]}" for q in chosen if q in grades]
    if lines:
        ingest_qrels(store, write("audit.txt", "\n".join(lines) + "\n"), labeller="ana")
    return list(sample.qids)


def expected_ratio(
    f: np.ndarray, y: np.ndarray, at: np.ndarray, bounds: tuple[float, float] | None = None
) -> RatioEstimate:
    """The ratio estimate from per-query values with NaN where a measure is undefined: the
    judge's `f` on every query, the human `y` on every query (only `at` is read)."""
    b, v = (~np.isnan(f)).astype(float), (~np.isnan(y)).astype(float)
    a, u = np.nan_to_num(f) * b, np.nan_to_num(y) * v
    return corrected_ratio(a, b, u[at], v[at], at, bounds=bounds)


def contains(outer: list[float], inner: tuple[float, float]) -> bool:
    """The product's interval (its variance floored by the audited pairs' error rates) holds
    the floor-free one."""
    return outer[0] <= inner[0] + 1e-12 and inner[1] <= outer[1] + 1e-12


def judge_view(store: Store, tmp_path: Path) -> Any:
    """The evaluation of a copy where the judge's labels are the effective ones."""
    copy = tmp_path / "judge-view.duckdb"
    shutil.copyfile(store.path, copy)
    view = Store(copy)
    with view.write() as con:
        con.execute(
            "DELETE FROM judgments WHERE source = 'human' AND (qid, doc_id) IN "
            "(SELECT qid, doc_id FROM judgments WHERE source = 'judge' AND status = 'ok')"
        )
    return evaluate(view, ["base", "cand"])


def test_no_audit_yet_says_so_prints_the_command_and_a_forecast(store: Store, cli: Cli) -> None:
    table = cli("compare", "base", "cand")
    assert table.code == 0, table.err
    assert (
        "judge-corrected intervals: none yet — no audit yet: judge labels are among the "
        "effective labels (6)" in table.out
    )
    assert f"draw one with: judgepool --db {store.path} audit sample --queries" in table.out
    assert "twice the plain interval's width" in table.out
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    first = report["comparisons"][0]
    assert first["ppi"] is None and first["verdict"] is None
    assert first["ppi_reason"].startswith("no audit yet")
    forecast = first["ppi_forecast"]
    assert forecast["width"] == pytest.approx(2 * (first["ci95"][1] - first["ci95"][0]))
    assert forecast["basis"].startswith("no audit yet")
    assert report["audit"]["sample"] is None and report["audit"]["judge_labels"] == 6
    assert "audit sample --queries" in report["audit"]["command"]


def test_without_judge_labels_there_is_nothing_to_correct(store: Store, cli: Cli) -> None:
    report = json.loads(cli("compare", "base", "cand", "--judge", "nobody", "--format", "json").out)
    assert report["audit"] is None
    assert all(
        c["ppi"] is None and "no judge label" in c["ppi_reason"] for c in report["comparisons"]
    )
    assert report["runs"]["cand"]["ppi"] is None
    assert "judge-corrected" not in cli("compare", "base", "cand", "--judge", "nobody").out


@pytest.mark.slow
def test_corrected_differences_equal_the_independent_computation(
    store: Store, cli: Cli, write: Writer, tmp_path: Path
) -> None:
    qids = audit(store, cli, write, 4, {"q1": 0, "q2": 3, "q3": 1, "q4": 0, "q5": 1, "q6": 2})
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    audited = set(report["audit"]["audited"])
    assert audited == set(qids)  # audited = drawn: every judge label of theirs is a person's
    f_ev = judge_view(store, tmp_path)
    y_ev = evaluate(store, ["base", "cand"])
    for comparison in report["comparisons"]:
        m = comparison["measure"]
        f = f_ev.values[m][1] - f_ev.values[m][0]  # NaN where the judge's labels define none
        y = y_ev.values[m][1] - y_ev.values[m][0]
        at = np.array([i for i, q in enumerate(y_ev.qids) if q in audited])
        expected = expected_ratio(f, y, at, (-1.0, 1.0))
        got = comparison["ppi"]
        assert expected.ci is not None and got is not None, comparison
        assert got["estimate"] == pytest.approx(expected.estimate.estimate, abs=1e-12)
        assert contains(got["ci95"], expected.ci), (got["ci95"], expected.ci)
        assert (got["audited"], got["of"]) == (at.size, len(y_ev.qids))
        assert got["lambda"] == pytest.approx(expected.estimate.lam, abs=1e-12)
        assert comparison["verdict"] in ("robust", "judge-biased", "too small to tell")
    table = cli("compare", "base", "cand").out
    drawn = "audit sample #1 (4 drawn, uniform design, seed 2)"
    assert f"judge-corrected, on 4 audited queries of {drawn}" in table
    ndcg = next(c for c in report["comparisons"] if c["measure"] == "nDCG@10")
    row = next(
        line
        for line in table.splitlines()
        if line.startswith("cand ") and "nDCG@10" in line and "/6" in line
    )
    lo, hi = ndcg["ppi"]["ci95"]
    assert f"{ndcg['ppi']['estimate']:+.3f} [{lo:+.3f}, {hi:+.3f}]" in row
    assert row.rstrip().endswith(ndcg["verdict"])


@pytest.mark.slow
def test_corrected_means_in_eval_and_the_library(
    store: Store, cli: Cli, write: Writer, tmp_path: Path
) -> None:
    audit(store, cli, write, 3, {"q1": 0, "q2": 3, "q3": 1, "q4": 0, "q5": 1, "q6": 2})
    report = json.loads(cli("eval", "--run", "base", "--run", "cand", "--format", "json").out)
    f_ev, y_ev = judge_view(store, tmp_path), evaluate(store, ["base", "cand"])
    audited = set(report["audit"]["audited"])
    m = "nDCG@10"
    at = np.array([i for i, q in enumerate(y_ev.qids) if q in audited])
    expected = expected_ratio(f_ev.values[m][1], y_ev.values[m][1], at, (0.0, 1.0))
    got = report["runs"]["cand"]["ppi"][m]
    assert got["estimate"] == pytest.approx(expected.estimate.estimate, abs=1e-12)
    assert "judge-corrected, on 3 audited queries" in cli("eval", "--run", "cand").out
    db = jp.open(store.path)
    frame = db.compare("base", "cand").corrected
    assert frame["measure"].to_list() == list(MEASURES)
    assert frame["audited"].to_list() == [3, 3, 3]
    means = db.evaluate(["base", "cand"]).corrected
    row = means.filter((means["run"] == "cand") & (means["measure"] == m))
    assert row["estimate"].to_list() == [pytest.approx(expected.estimate.estimate, abs=1e-12)]


def test_one_audited_query_is_not_enough(store: Store, cli: Cli, write: Writer) -> None:
    assert audit(store, cli, write, 2, {"q3": 1}) == ["q3", "q4"]
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    assert report["audit"]["audited"] == ["q3"]
    assert report["comparisons"][0]["ppi"] is None
    assert "only 1 of 6 queries audited" in report["comparisons"][0]["ppi_reason"]
    assert report["audit"]["command"].endswith("audit status")
    assert "1 of the 2 queries of audit sample #1 are fully audited" in report["audit"]["reason"]


def test_the_trec_eval_average_corrects_over_every_query(
    store: Store, cli: Cli, write: Writer
) -> None:
    audit(store, cli, write, 3, {"q1": 0, "q2": 3, "q3": 1, "q4": 0, "q5": 1, "q6": 2})
    report = json.loads(
        cli("compare", "base", "cand", "--average", "trec_eval", "--format", "json").out
    )
    assert {c["ppi"]["of"] for c in report["comparisons"] if c["ppi"]} == {6}


def test_a_query_the_judge_found_nothing_in_is_corrected_not_dropped(
    cli: Cli, write: Writer
) -> None:
    """A query where every judge label is 0 has no nDCG under the judge's labels; once the audit
    finds a relevant passage there it has one under the effective labels. The corrected figure
    speaks for every query the human labels define, the judge's count of queries corrected with
    its values (the ratio estimator), never over fewer: dropping the query would drop exactly
    where the judge missed most."""
    from judgepool.pooling.store.judgments import Judgment, write_judgments

    store = Store()
    qids = [f"q{i}" for i in range(1, 5)]
    ingest_topics = "".join(f"{q}\tquestion {q}\n" for q in qids)
    assert cli("ingest", "queries", str(write("t.tsv", ingest_topics))).code == 0
    docs = "".join(
        json.dumps({"doc_id": f"{q}-{d}", "text": f"{d} of {q}"}) + "\n"
        for q in qids
        for d in ("h1", "h2", "j1", "j2")
    )
    assert cli("ingest", "docs", str(write("d.jsonl", docs))).code == 0
    base = "".join(
        f"{q} Q0 {q}-{d} {r} {9 - r} base\n" for q in qids for r, d in enumerate(("h1", "h2"), 1)
    )
    cand = "".join(
        f"{q} Q0 {q}-{d} {r} {9 - r} cand\n"
        for q in qids
        for r, d in enumerate(("j1", "h1", "j2"), 1)
    )
    assert cli("ingest", "run", str(write("base.trec", base))).code == 0
    assert cli("ingest", "run", str(write("cand.trec", cand))).code == 0
    human = {"q1": (2, 0), "q2": (0, 3), "q3": (1, 2), "q4": (0, 0)}  # q4: nothing relevant
    qrels = "".join(
        f"{q} 0 {q}-h{i + 1} {g}\n" for q, gs in human.items() for i, g in enumerate(gs)
    )
    assert cli("ingest", "qrels", str(write("h.txt", qrels)), "--labeller", "nist").code == 0
    judge = {"q1": (2, 1), "q2": (3, 0), "q3": (0, 2), "q4": (0, 0)}  # q4: the judge sees nothing
    write_judgments(
        store,
        [
            Judgment(qid=q, doc_id=f"{q}-j{i + 1}", grade=g, source="judge", labeller="j")
            for q, gs in judge.items()
            for i, g in enumerate(gs)
        ],
    )
    assert cli("audit", "sample", "--queries", "3", "--seed", SEED).code == 0
    sample = latest_sample(store, "chunk")
    assert sample is not None and "q4" in sample.qids  # the query the judge missed is audited
    truth = {"q1": (2, 1), "q2": (3, 1), "q3": (1, 2), "q4": (3, 0)}
    audit = "".join(
        f"{q} 0 {q}-j{i + 1} {g}\n" for q in sample.qids for i, g in enumerate(truth[q])
    )
    assert cli("ingest", "qrels", str(write("a.txt", audit)), "--labeller", "ana").code == 0
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    ndcg_row = next(c for c in report["comparisons"] if c["measure"] == "nDCG@10")
    assert ndcg_row["n"] == 4 and ndcg_row["ppi"] is not None, (ndcg_row, report["audit"])
    assert (ndcg_row["ppi"]["audited"], ndcg_row["ppi"]["of"]) == (3, 4)
    y_ev = evaluate(store, ["base", "cand"])
    assert y_ev.qids == tuple(qids)
    y = np.nan_to_num(y_ev.values["nDCG@10"][1]) - np.nan_to_num(y_ev.values["nDCG@10"][0])

    # The judge's view: its labels where it labelled; q4's nDCG is undefined there.
    def ndcg(gains: list[int], labelled: list[int]) -> float:
        ideal = sorted(labelled, reverse=True)[:10]
        dcg = sum(g / np.log2(r + 2) for r, g in enumerate(gains))
        best = sum(g / np.log2(r + 2) for r, g in enumerate(ideal))
        return dcg / best if best else float("nan")

    f = np.array(
        [
            ndcg([judge[q][0], human[q][0], judge[q][1]], [*human[q], *judge[q]])
            - ndcg([human[q][0], human[q][1]], [*human[q], *judge[q]])
            for q in qids
        ]
    )
    assert np.isnan(f[3]) and not np.isnan(y[3])  # q4: undefined for the judge, not for people
    at = np.array([i for i, q in enumerate(qids) if q in sample.qids])
    expected = expected_ratio(f, y, at, (-1.0, 1.0))
    assert ndcg_row["ppi"]["estimate"] == pytest.approx(expected.estimate.estimate, abs=1e-12)


def test_markdown_and_html_reports_carry_the_corrected_verdicts(
    store: Store, cli: Cli, write: Writer, tmp_path: Path
) -> None:
    """Issue 21, item 6: `compare --format markdown` and `report --html/--markdown` said nothing
    of the audit; they carry the audit's size, every corrected interval and its verdict."""
    audit(store, cli, write, 4, {"q1": 0, "q2": 3, "q3": 1, "q4": 0, "q5": 1, "q6": 2})
    report = json.loads(cli("compare", "base", "cand", "--format", "json").out)
    markdown = cli("compare", "base", "cand", "--format", "markdown").out
    html_out, md_out = tmp_path / "r.html", tmp_path / "r.md"
    made = cli("report", "base", "cand", "--html", str(html_out), "--markdown", str(md_out))
    assert made.code == 0, made.err
    html = html_out.read_text(encoding="utf-8")
    assert md_out.read_text(encoding="utf-8") == markdown
    size = "4 audited queries of audit sample #1 (4 drawn, uniform design, seed 2)"
    for text in (markdown, html):
        assert "Can I trust the judge?" in text and size in text
        assert "too small to tell =" in text  # the legend says what each verdict means
    for c in report["comparisons"]:
        lo, hi = c["ppi"]["ci95"]
        cell = f"{c['ppi']['estimate']:+.3f} \\[{lo:+.3f}, {hi:+.3f}]"  # `[` escaped
        trust = markdown.split("#### Can I trust the judge?")[1]
        row = next(
            line for line in trust.splitlines() if line.startswith(f"| cand | {c['measure']}")
        )
        assert cell in row and row.rstrip(" |").endswith(c["verdict"]), row
        assert f"<td>{c['verdict']}</td>" in html
