"""Files read as trec_eval reads them: whitespace, comments, C floats, float32 score ties, grades.

trec_eval splits columns on any run of whitespace, skips `#` comment lines, reads scores with C's
atof into a 32-bit float and orders a query's docs by that float descending, then doc id
descending. Whatever path our ingest takes (the fast scan or the exact reader), the run
that lands in the database is ranked as trec_eval ranks it.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def ranking(run: str) -> list[tuple[str, str, int]]:
    with Store().read() as con:
        found = con.execute(
            "SELECT qid, doc_id, rank FROM run_rows JOIN runs USING (run_key) "
            "WHERE name = ? ORDER BY qid, rank",
            [run],
        ).fetchall()
    return [(str(q), str(d), int(r)) for q, d, r in found]


def labels() -> list[tuple[str, str, int]]:
    with Store().read() as con:
        found = con.execute("SELECT qid, doc_id, grade FROM judgments ORDER BY 1, 2").fetchall()
    return [(str(q), str(d), int(g)) for q, d, g in found]


# A long single-space file whose line 980 has a double tab (as in ir_measures' tests/compat.run):
# the fast scan takes the first line's separator and fails on that line.
DOUBLE_TAB = "".join(
    f"{1 + i // 100} Q0 D{i} {i % 100} {1000 - i} compat\n"
    if i != 979
    else f"{1 + i // 100}\t\tQ0\tD{i}\t{i % 100}\t{1000 - i}\tcompat\n"
    for i in range(1200)
)
# Spaces and tabs mixed on one line (as in trectools' qrel1.txt).
MIXED_QRELS = "1 0 A 1\n1\t0 B  0\n2 \t0\tC\t2\n"


def test_a_double_tab_on_line_980_loads_the_whole_run(cli: Cli, write: Writer) -> None:
    done = cli("ingest", "run", write("compat.run", DOUBLE_TAB))
    assert done.code == 0, done.err
    assert "run 'compat' added: 1200 rows, 12 queries" in done.out
    assert ranking("compat")[:2] == [("1", "D0", 1), ("1", "D1", 2)]
    assert ("10", "D979", 80) in ranking("compat")


def test_spaces_mixed_with_tabs_in_qrels(cli: Cli, write: Writer) -> None:
    done = cli("ingest", "qrels", write("qrel1.txt", MIXED_QRELS))
    assert done.code == 0, done.err
    assert labels() == [("1", "A", 1), ("1", "B", 0), ("2", "C", 2)]


def test_after_a_fallback_the_database_still_works(cli: Cli, write: Writer) -> None:
    """The fast scan used to fail inside the write transaction and leave it aborted."""
    assert cli("ingest", "run", write("compat.run", DOUBLE_TAB)).code == 0
    assert cli("ingest", "qrels", write("qrel1.txt", MIXED_QRELS)).code == 0
    assert cli("ingest", "run", write("again.trec", "1 Q0 D0 1 1.0 again\n")).code == 0
    status = cli("status")
    assert status.code == 0, status.err


@pytest.mark.parametrize(
    "separator", ["\t\t", " \t", "\t ", "  ", "\x0b", "\x0c", " \r "], ids=repr
)
def test_any_c_whitespace_separates_columns(cli: Cli, write: Writer, separator: str) -> None:
    body = "q1 Q0 a 1 1.5 t\nq1 Q0 b 2 2.5 t\n"
    path = write("ws.trec", body.replace(" ", separator))
    done = cli("ingest", "run", path, "--name", "ws")
    assert done.code == 0, done.err
    assert ranking("ws") == [("q1", "b", 1), ("q1", "a", 2)]


def test_comment_lines_are_skipped_as_trec_eval_does(cli: Cli, write: Writer) -> None:
    run = "# bm25, k1=0.9\nq1 Q0 a 1 1.0 t\n   # indented comment\n\nq1 Q0 b 2 2.0 t\n"
    assert cli("ingest", "run", write("c.trec", run), "--name", "c").code == 0
    assert ranking("c") == [("q1", "b", 1), ("q1", "a", 2)]
    qrels = "# assessor 1\nq1 0 a 1\n# assessor 2\nq1 0 b 0\n"
    assert cli("ingest", "qrels", write("c.qrels", qrels)).code == 0
    assert labels() == [("q1", "a", 1), ("q1", "b", 0)]


def test_a_six_field_comment_is_not_a_row(cli: Cli, write: Writer) -> None:
    run = "q1 Q0 a 1 1.0 t\n#q1 Q0 b 2 2.0 t\nq1 Q0 c 3 0.5 t\n"
    assert cli("ingest", "run", write("c6.trec", run), "--name", "c6").code == 0
    assert [d for _, d, _ in ranking("c6")] == ["a", "c"]


@pytest.mark.parametrize(
    ("score", "value"),
    [
        ("1e3", 1000.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("+2", 2.0),
        ("-0", 0.0),
        ("0x1.8p1", 3.0),
        ("0X10", 16.0),
        ("inf", float("inf")),
        ("-Infinity", float("-inf")),
    ],
)
def test_c_floats_are_read_as_strtod_reads_them(
    cli: Cli, write: Writer, score: str, value: float
) -> None:
    path = write("f.trec", f"q1 Q0 d1 1 {score} t\n")
    assert cli("ingest", "run", path, "--name", "f").code == 0, score
    with Store().read() as con:
        assert con.execute("SELECT score FROM run_rows").fetchone() == (value,)


def _pytrec_ndcg(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int
) -> dict[str, float]:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}"})
    return {q: v[f"ndcg_cut_{k}"] for q, v in evaluator.evaluate(run).items()}


def _our_ndcg(run: str, k: int) -> dict[str, float]:
    from judgepool.metrics.evaluate import evaluate

    values = evaluate(Store(), spec=EvalSpec(k=k, resamples=10)).per_query(run)
    return {qid: float(v[f"nDCG@{k}"] or 0.0) for qid, v in values.items()}


def test_scores_equal_in_float32_are_ties_broken_by_doc_id(cli: Cli, write: Writer) -> None:
    """0.1 and 0.10000000001 differ as doubles and are one float32: trec_eval ranks b first."""
    run = "q1 Q0 a 1 0.10000000001 t\nq1 Q0 b 2 0.1 t\nq1 Q0 c 3 0.05 t\n"
    assert cli("ingest", "run", write("tie.trec", run), "--name", "tie").code == 0
    assert [d for _, d, _ in ranking("tie")] == ["b", "a", "c"]
    # Same through the exact reader (a hex float sends the file there) and JSONL and Parquet.
    exact = run.replace("0.05", "0x1.999999999999ap-5")
    assert cli("ingest", "run", write("tie2.trec", exact), "--name", "tie2").code == 0
    assert [d for _, d, _ in ranking("tie2")] == ["b", "a", "c"]
    jsonl = (
        '{"qid": "q1", "doc_id": "a", "score": 0.10000000001}\n'
        '{"qid": "q1", "doc_id": "b", "score": 0.1}\n'
    )
    assert cli("ingest", "run", write("tie.jsonl", jsonl), "--name", "tie3").code == 0
    assert [d for _, d, _ in ranking("tie3")] == ["b", "a"]


def test_float32_ties_agree_with_pytrec_eval(cli: Cli, write: Writer) -> None:
    """A constructed run: per query, near-equal scores at the cutoff; nDCG@1 as trec_eval's."""
    lines, qrels, run = [], {}, {}
    for q in range(20):
        base = 0.3 + q / 100
        # x ranks first by double, y ties it in float32 and wins on doc id (y > x).
        pairs = [(f"x{q}", base + 1e-10), (f"y{q}", base), (f"z{q}", base / 2)]
        qrels[str(q)] = {f"y{q}": 2, f"x{q}": 0, f"z{q}": 1}
        run[str(q)] = {doc: score for doc, score in pairs}
        lines += [f"{q} Q0 {doc} {i + 1} {score!r} t" for i, (doc, score) in enumerate(pairs)]
    assert (
        cli("ingest", "run", write("near.trec", "\n".join(lines) + "\n"), "--name", "near").code
        == 0
    )
    qrels_text = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    assert cli("ingest", "qrels", write("near.qrels", qrels_text)).code == 0
    reference = _pytrec_ndcg(qrels, run, 1)
    assert set(reference.values()) == {1.0}
    assert _our_ndcg("near", 1) == reference


@pytest.mark.shared
def test_trec_eval_files_with_comments_read_as_without(cli: Cli, shared_data: Path) -> None:
    """qrels.test.with-comments is qrels.test with comment lines and one id holding a '#'
    (CR#93E-1860): trec_eval's suite expects the same output from both."""
    te = shared_data / "trec_eval_test"
    assert cli("ingest", "qrels", te / "qrels.test", "--labeller", "plain").code == 0
    commented = cli("ingest", "qrels", te / "qrels.test.with-comments", "--labeller", "commented")
    assert commented.code == 0, commented.err
    assert "3681 chunk-level labels on 3 queries" in commented.out
    with Store().read() as con:
        plain, with_comments = (
            con.execute(
                "SELECT list((qid, doc_id, grade) ORDER BY qid, doc_id) FROM judgments "
                "WHERE labeller = ?",
                [who],
            ).fetchall()[0][0]
            for who in ("plain", "commented")
        )
    renamed = {("301", "CR#93E-1860", 0) if d == "CR93E-1860" else (q, d, g) for q, d, g in plain}
    assert set(map(tuple, with_comments)) == renamed


@pytest.mark.shared
def test_trec_eval_results_with_tabs_and_spaces_match_pytrec_eval(
    cli: Cli, shared_data: Path, tmp_path: Path
) -> None:
    """results.test separates columns with a tab then spaces; gzip it to take the other path."""
    te = shared_data / "trec_eval_test"
    gz = tmp_path / "results.test.gz"
    gz.write_bytes(gzip.compress((te / "results.test").read_bytes()))
    shutil.copy(te / "qrels.test", tmp_path / "qrels.test")
    assert cli("ingest", "qrels", tmp_path / "qrels.test").code == 0
    done = cli("ingest", "run", gz)
    assert done.code == 0, done.err
    assert "run 'STANDARD' added: 1500 rows, 3 queries" in done.out
    import pytrec_eval

    with (te / "qrels.test").open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with (te / "results.test").open() as fh:
        run = pytrec_eval.parse_run(fh)
    reference = {
        q: v["ndcg_cut_10"]
        for q, v in pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run).items()
    }
    assert _our_ndcg("STANDARD", 10) == pytest.approx(reference, abs=1e-9)


def test_grades_outside_0_to_3_are_kept_and_reported(cli: Cli, write: Writer) -> None:
    done = cli("ingest", "qrels", write("wide.qrels", "q1 0 a 1000\nq1 0 b -1\nq1 0 c 2\n"))
    assert done.code == 0, done.err
    assert "grades up to 1000 found: nDCG gains are linear in the grade" in done.err
    assert "grades down to -1 found" in done.err
    assert labels() == [("q1", "a", 1000), ("q1", "b", -1), ("q1", "c", 2)]
    quiet = cli("ingest", "qrels", write("usual.qrels", "q2 0 a 3\nq2 0 b 0\n"))
    assert quiet.code == 0 and "grades" not in quiet.err


@pytest.mark.shared
def test_float32_ties_on_trec_eval_rag_files_agree_with_pytrec_eval(
    cli: Cli, shared_data: Path, tmp_path: Path
) -> None:
    """results.comment.test with every second score set one double ulp under the score before
    it: as doubles the pair is ordered, as floats it ties and trec_eval orders it by doc id
    (descending). nDCG@10 and @20 per query equal pytrec_eval's (trec_eval's code)."""
    import numpy as np
    import pytrec_eval

    te = shared_data / "trec_eval_test"
    lines = (te / "results.comment.test").read_text().splitlines()
    out, run, previous = [], {}, (None, 0.0)
    for i, line in enumerate(lines):
        qid, q0, doc, rank, score, tag = line.split()
        value = float(score)
        if i % 2 == 1 and previous[0] == qid:
            lower = float(np.nextafter(previous[1], -np.inf))
            if np.float32(lower) == np.float32(previous[1]):
                value = lower
        previous = (qid, value)
        run.setdefault(qid, {})[doc] = value
        out.append(f"{qid} {q0} {doc} {rank} {value!r} {tag}")
    path = tmp_path / "near-ties.trec"
    path.write_text("\n".join(out) + "\n")
    assert cli("ingest", "qrels", te / "qrels.comment.test").code == 0
    assert cli("ingest", "run", path, "--name", "near").code == 0
    with (te / "qrels.comment.test").open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    for k in (10, 20):
        reference = _pytrec_ndcg(qrels, run, k)
        ours = _our_ndcg("near", k)
        assert ours == pytest.approx({q: reference[q] for q in ours}, abs=1e-9), k
