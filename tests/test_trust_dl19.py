"""Issue 13 end to end on TREC DL 2019, as a user runs it: BM25's top-10 judged by NIST, TAS-B's
other top-10 pairs are holes; the offline judge fills them; calibrate, audit a sample of 10
queries (NIST's grades of the listed pairs as the person's labels), compare with the
judge-corrected intervals, and the dashboard's queue, Audit and Compare pages on that database.

Every expected figure is derived here from the shared files (pools, grade counts, the listing), or
recomputed independently (kappa from the printed confusion matrix; the corrected intervals from
per-query values of a copy where the judge's labels are the effective ones).
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgepool.judge.offline import METHOD_VERSION
from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.ppi_ratio import corrected_ratio
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_db import frames, open_page, plain, queue_button, texts_of

pytestmark = [pytest.mark.slow, pytest.mark.shared]

Cli = Callable[..., CliResult]
Pair = tuple[str, str]
RUNS = {"bm25": "dl19-passage.bm25.top100.trec", "tasb": "dl19-passage.tasb.top100.trec"}
AUDITED = 10
JUDGE = f"offline:all-MiniLM-L6-v2@{METHOD_VERSION}"


def top10(path: Path) -> set[Pair]:
    pairs = set()
    for line in path.read_text().splitlines():
        qid, _, doc_id, rank, *_ = line.split()
        if int(rank) <= 10:
            pairs.add((qid, doc_id))
    return pairs


def nist(dl: Path) -> dict[Pair, int]:
    grades = {}
    for line in (dl / "qrels" / "qrels.dl19-passage.txt").read_text().splitlines():
        qid, _, doc_id, grade = line.split()
        grades[qid, doc_id] = int(grade)
    return grades


def unescape(field: str) -> str:
    """A TSV field of the listing back to its text (\\t \\n \\r \\\\)."""
    table = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}
    return re.sub(r"\\([tnr\\])", lambda m: table[m.group(1)], field)


def kappa(m: list[list[int]]) -> float:
    """Cohen's kappa of a confusion matrix, by its definition."""
    total = sum(map(sum, m))
    observed = sum(m[i][i] for i in range(len(m))) / total
    rows = [sum(r) for r in m]
    cols = [sum(r[j] for r in m) for j in range(len(m))]
    expected = sum(r * c for r, c in zip(rows, cols, strict=True)) / total**2
    return (observed - expected) / (1 - expected)


def figure(out: str, name: str) -> tuple[float, float]:
    """The (sample, pool mix) figures of one row of calibrate's table."""
    row = next(line for line in out.splitlines() if line.startswith(name + "  "))
    sample, pool = row[len(name) :].split()
    return float(sample), float(pool)


def judge_view(store: Store, tmp_path: Path) -> Any:
    """The evaluation of a copy of the database where the judge's labels are the effective ones
    (the audit's human labels of judge-labelled pairs removed)."""
    copy = tmp_path / "judge-view.duckdb"
    shutil.copyfile(store.path, copy)
    view = Store(copy)
    with view.write() as con:
        con.execute(
            "DELETE FROM judgments WHERE source = 'human' AND (qid, doc_id) IN "
            "(SELECT qid, doc_id FROM judgments WHERE source = 'judge' AND status = 'ok' "
            "AND purpose = 'label')"  # calibration answers are no labels
        )
    return evaluate(view, list(RUNS))


@pytest.mark.slow
def test_trust_loop_end_to_end_on_dl19(
    shared_data: Path, cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dl = shared_data / "trec-dl"
    runs = {name: dl / "runs" / "dl19" / file for name, file in RUNS.items()}
    pools = {name: top10(path) for name, path in runs.items()}
    grades = nist(dl)
    topics = dl / "topics" / "topics.dl19-passage.judged.tsv"
    query_text = dict(line.split("\t", 1) for line in topics.read_text().splitlines())
    needed = {d for pool in pools.values() for _, d in pool}
    texts: dict[str, str] = {}
    with (dl / "passages" / "msmarco-v1-passages.dl19-dl20-runs.jsonl").open() as fh:
        for line in fh:
            passage = json.loads(line)
            if passage["docid"] in needed:
                texts[passage["docid"]] = passage["text"]
    assert set(texts) == needed  # every top-10 passage of these runs has its text
    docs = tmp_path / "dl19-top10-passages.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in texts.items()))
    bm25_labels = {pair: grades[pair] for pair in sorted(pools["bm25"])}  # BM25 judged@10 is 1
    qrels = tmp_path / "qrels.bm25-top10.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in bm25_labels.items()))
    holes = pools["tasb"] - pools["bm25"]

    # 1. Ingest.
    for args in (("queries", topics), ("docs", docs), ("qrels", qrels, "--labeller", "nist")):
        done = cli("ingest", *args)
        assert done.code == 0, done.err
    for name, path in runs.items():
        done = cli("ingest", "run", "--name", name, path)
        assert done.code == 0, done.err
    refused = cli("compare", "bm25", "tasb")
    assert refused.code == 3 and "tasb" in refused.err  # under the judged@10 gate

    # 2. The offline judge fills the holes.
    judged = cli("judge", "--model", "offline", "--no-canaries", "--no-progress")
    assert judged.code == 0, judged.err
    assert f"judge: {JUDGE}; {len(holes)} holes at depth 10 (chunk level, 2 runs)" in judged.err
    statuses = judged.out.split("grade  pairs")[0]
    assert re.search(rf"^ok\s+{len(holes)}$", statuses, re.M), judged.out
    before = 1 - len(holes) / len(pools["tasb"])
    assert re.search(rf"^tasb\s+{before:.3f}\s+1\.000\s+0$", judged.out, re.M), judged.out

    # 3. Calibrate: the stratified sample, its figures, the confusion matrix.
    sample = 40
    calibrated = cli(
        "calibrate", "--model", "offline", "--sample", sample, "--seed", "1", "--no-progress"
    )
    assert calibrated.code == 0, calibrated.err
    out = calibrated.out
    mix = Counter(bm25_labels.values())
    assert min(mix.values()) >= sample // 4  # so each grade gets its quarter
    assert f"{sample} of {len(bm25_labels)} pooled human-labelled pairs at depth 10" in out
    assert "pool: " + " / ".join(str(mix[g]) for g in range(4)) in out
    assert figure(out, "pairs") == (sample, len(bm25_labels))
    confusion = [
        [int(n) for n in line.split(":")[1].split()]
        for line in out.split("columns: the judge's grade 0 1 2 3):")[1].splitlines()[1:5]
    ]
    assert [sum(row) for row in confusion] == [sample // 4] * 4
    exact = sum(confusion[g][g] for g in range(4)) / sample
    assert figure(out, "exact agreement")[0] == pytest.approx(exact, abs=5e-4)
    assert figure(out, "Cohen's kappa (grades 0-3)")[0] == pytest.approx(kappa(confusion), abs=5e-4)
    for g in range(4):
        hit = confusion[g][g] / (sample // 4)
        assert figure(out, f"hit rate, human grade {g}")[0] == pytest.approx(hit, abs=5e-4)
    assert "stored as calibration run #1" in out

    # 4. Audit: draw 10 queries, list what a person must label, label it, status.
    drawn = cli("audit", "sample", "--queries", AUDITED, "--seed", "1")
    assert drawn.code == 0, drawn.err
    assert f"drew {AUDITED} of {len(query_text)} queries (seed 1): audit sample #1" in drawn.out
    qids = next(ln for ln in drawn.out.splitlines() if ln.startswith("queries: ")).split()[1:]
    assert len(set(qids)) == AUDITED and set(qids) <= set(query_text)
    expected = {(q, d) for q, d in holes if q in qids}  # the judge labelled every hole
    assert (
        f"to label: {len(expected)} judge-labelled pairs of theirs (every judge label their "
        f"measures read), 0 with a human label already, {len(expected)} left" in drawn.out
    )
    listed = cli("audit", "sample", "--list", "--format", "tsv")
    assert listed.code == 0, listed.err
    header, *lines = listed.out.splitlines()
    assert header == "qid\tdoc_id\tquery\tpassage\thuman_grade"  # no judge grade: blind
    rows = [line.split("\t") for line in lines]
    assert {(r[0], r[1]) for r in rows} == expected and len(rows) == len(expected)
    for qid, doc_id, query, passage, human in rows:
        assert (unescape(query), unescape(passage), human) == (query_text[qid], texts[doc_id], "")

    # The queue on DL19: the first pair opens blind with its texts; grade it with NIST's grade.
    at = open_page("audit")
    assert not at.exception, [e.value for e in at.exception]
    first = plain(texts_of(at, "subheader")[0])
    qid, doc_id = first.split(" · ")
    assert (qid, doc_id) in expected
    shown = texts_of(at, "text")
    assert f"Query: {query_text[qid]}" in shown and texts[doc_id] in shown
    at.text_input(key="queue_user").input("tester")
    queue_button(at, f"grade_{grades.get((qid, doc_id), 0)}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(
        f"for {qid} · {doc_id} as a human label by audit:tester (1 of {len(expected)} "
        "labelled)" in plain(s)
        for s in texts_of(at, "success")
    )
    assert plain(texts_of(at, "subheader")[0]) != first  # the next pair is open

    # The auditor's labels: NIST's grade of each listed pair; one NIST never judged is graded 0,
    # as TREC counts an unjudged passage.
    audit = tmp_path / "audit-labels.txt"
    audit.write_text("".join(f"{q} 0 {d} {grades.get((q, d), 0)}\n" for q, d, *_ in rows))
    ingested = cli("ingest", "qrels", audit, "--labeller", "auditor")
    assert ingested.code == 0, ingested.err
    assert f"{len(rows)} chunk-level labels on {AUDITED} queries by 'auditor'" in ingested.out
    status = cli("audit", "status")
    assert status.code == 0, status.err
    assert (
        f"{AUDITED} of {AUDITED} queries fully audited; {len(rows)} of {len(rows)} pairs "
        "labelled, 0 left" in status.out
    )

    # 5. Compare: plain and judge-corrected intervals, the verdict, against a recomputation.
    compared = cli("compare", "bm25", "tasb", "--format", "json")
    assert compared.code == 0, compared.err
    report = json.loads(compared.out)
    assert sorted(report["audit"]["audited"]) == sorted(qids)
    assert report["audit"]["sample"]["queries"] == AUDITED
    assert report["audit"]["judge_labels"] == len(holes) - len(rows)  # calibration's never count
    store = Store(tmp_path / "test.duckdb")
    f_ev, y_ev = judge_view(store, tmp_path), evaluate(store, list(RUNS))
    assert len(report["comparisons"]) == 3
    for comparison in report["comparisons"]:
        m, got = comparison["measure"], comparison["ppi"]
        assert got is not None and comparison["ppi_reason"] is None, comparison
        assert set(got) >= {"estimate", "ci95", "audited", "of", "lambda", "audit_ci95"}
        # The ratio estimator over the evaluation set: the judge's values and the queries its
        # labels define on every query, the human ones on the audited queries.
        f = f_ev.values[m][1] - f_ev.values[m][0]
        y = y_ev.values[m][1] - y_ev.values[m][0]
        b, v = (~np.isnan(f)).astype(float), (~np.isnan(y)).astype(float)
        at_ = np.array([i for i, q in enumerate(y_ev.qids) if q in qids])
        recomputed = corrected_ratio(
            np.nan_to_num(f) * b, b, (np.nan_to_num(y) * v)[at_], v[at_], at_, bounds=(-1.0, 1.0)
        )
        assert recomputed.ci is not None
        assert got["estimate"] == pytest.approx(recomputed.estimate.estimate, abs=1e-12)
        # the product's variance is floored by the audited pairs' error rates: never narrower
        assert got["ci95"][0] <= recomputed.ci[0] + 1e-12
        assert recomputed.ci[1] <= got["ci95"][1] + 1e-12
        assert (got["audited"], got["of"]) == (at_.size, len(y_ev.qids))
        assert got["audited"] == AUDITED  # audited = drawn
        assert got["lambda"] == pytest.approx(recomputed.estimate.lam) and 0 <= got["lambda"] <= 1
        assert got["ci95"][0] <= got["estimate"] <= got["ci95"][1]
        assert comparison["verdict"] in ("robust", "judge-biased", "too small to tell")
    ndcg = next(c for c in report["comparisons"] if c["measure"] == "nDCG@10")
    with capsys.disabled():
        print(
            f"\nDL19 tasb - bm25 nDCG@10: plain {ndcg['delta']:+.3f} {ndcg['ci95']}, corrected "
            f"{ndcg['ppi']['estimate']:+.3f} {ndcg['ppi']['ci95']} on {ndcg['ppi']['audited']} "
            f"of {ndcg['ppi']['of']}: {ndcg['verdict']}"
        )  # README's figures (run with -s)
    table = cli("compare", "bm25", "tasb")
    assert table.code == 0, table.err
    assert f"of audit sample #1 ({AUDITED} drawn, uniform design, seed 1)" in table.out
    for comparison in report["comparisons"]:
        ppi = comparison["ppi"]
        lo, hi = ppi["ci95"]
        row = next(
            line
            for line in table.out.splitlines()
            if line.split()[:2] == ["tasb", comparison["measure"]] and "/" in line
        )
        assert f"{ppi['estimate']:+.3f} [{lo:+.3f}, {hi:+.3f}]" in row
        assert f"{ppi['audited']}/{ppi['of']}" in row and row.endswith(comparison["verdict"])

    # 6. The dashboard on that database: Compare's corrected interval, Audit's finished queue.
    page = open_page("compare")
    page.selectbox(key="compare_baseline").set_value("bm25").run()
    page.multiselect(key="compare_candidates").set_value(["tasb"]).run()
    assert not page.exception, [e.value for e in page.exception]
    (corrected,) = frames(page, "corrected 95%")
    by_measure = {c["measure"]: c for c in report["comparisons"]}
    assert sorted(corrected["measure"]) == sorted(by_measure)
    for _, shown_row in corrected.iterrows():
        c = by_measure[shown_row["measure"]]
        assert shown_row["judge-corrected"] == pytest.approx(c["ppi"]["estimate"])
        assert shown_row["judge check"] == c["verdict"]
        assert shown_row["audited"] == f"{c['ppi']['audited']} of {c['ppi']['of']}"
    audit_page = open_page("audit")  # the queue: its progress
    progress = audit_page.get("progress")[0].proto.text
    audit_page.session_state["audit_tabs"] = "Agreement & calibration"
    audit_page.run()
    assert not audit_page.exception, [e.value for e in audit_page.exception]
    assert progress.startswith(
        f"{len(rows)} of {len(rows)} pairs labelled · {AUDITED} of {AUDITED} queries fully audited"
    )
    (calibrations,) = frames(audit_page, "α ordinal (pool mix)")
    assert calibrations["judge"].tolist() == [JUDGE]
