"""`--average trec_eval`: means exactly as `trec_eval -c` averages them (issue 11.16).

trec_eval -c averages over every query of the qrels: a query the run misses counts 0, and so
does a query with no doc at the measure's threshold; a query the run has but the qrels do not is
never counted. Checked against trec_eval's own -c output (out.test.aqc) and against pytrec_eval
(trec_eval's code, per query) averaged that way, to 1e-9, through the real CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.metrics.measures import Measure
from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt
from tests.test_metrics_cli import BASE, CAND, QRELS

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def names(rel: int) -> dict[str, str]:
    """trec_eval's name -> ours, at relevance level `rel` (nDCG takes none)."""
    return {
        "ndcg_cut_10": str(Measure("nDCG", 10)),
        "recall_10": str(Measure("R", 10, rel)),
        "relative_P_10": str(Measure("nR", 10, rel)),
    }


def _ingest(cli: Cli, qrels: Path, runs: dict[str, Path]) -> None:
    assert cli("ingest", "qrels", qrels).code == 0
    for name, path in runs.items():
        done = cli("ingest", "run", path, "--name", name, "--format", "trec")
        assert done.code == 0, done.err


def _eval_json(cli: Cli, *args: str) -> dict:
    done = cli("eval", "--format", "json", "--resamples", "20", *args)
    assert done.code == 0, done.err
    return json.loads(done.out)


def _pytrec(qrels: Path, run: Path, rel: int) -> tuple[list[str], dict[str, dict[str, float]]]:
    import pytrec_eval

    with qrels.open() as fh:
        judged = pytrec_eval.parse_qrel(fh)
    ranking: dict[str, dict[str, float]] = {}
    with run.open() as fh:
        for line in fh:
            qid, _, doc, _, score = line.split()[:5]
            ranking.setdefault(qid, {})[doc] = float(score)
    names = {"ndcg_cut.10", "recall.10", "relative_P.10"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, names, relevance_level=rel)
    return sorted(judged), evaluator.evaluate(ranking)


def _trec_eval_c(qids: list[str], per_query: dict[str, dict[str, float]], name: str) -> float:
    """trec_eval -c's mean: every qrels query, 0 where the run has none."""
    return sum(per_query.get(q, {}).get(name, 0.0) for q in qids) / len(qids)


@pytest.mark.shared
@pytest.mark.parametrize("rel", [1, 2, 3])
def test_trec_rag_means_equal_trec_eval_c(
    shared_data: Path, cli: Cli, tmp_path: Path, rel: int
) -> None:
    """31 judged topics, one with no relevant doc (two more with none of grade >= 2, ...);
    the run ranks 301 topics, 270 of them not in the qrels (never counted)."""
    te = shared_data / "trec_eval_test"
    qrels, run = te / "qrels.comment.test", te / "results.comment.test"
    _ingest(cli, qrels, {"rag": run})
    args = ("--rel", str(rel), "--key-rel", str(rel))
    default = _eval_json(cli, *args)
    report = _eval_json(cli, *args, "--average", "trec_eval")
    qids, reference = _pytrec(qrels, run, rel)
    assert len(qids) == 31 and report["queries"] == 31 and report["average"] == "trec_eval"
    assert default["average"] == "defined"
    mine = report["runs"]["rag"]
    for trec_name, name in names(rel).items():
        assert report["averaged"][name] == 31 and report["left_out"][name] == []
        assert mine["mean"][name] == pytest.approx(
            _trec_eval_c(qids, reference, trec_name), abs=1e-9
        )
        for qid in qids:
            assert mine["per_query"][qid][name] == pytest.approx(
                reference[qid][trec_name], abs=1e-9
            )
    # The default leaves out the queries with no doc at the threshold (one has no relevant doc,
    # two more none of grade >= 2 ...): fewer queries.
    nr = names(rel)["relative_P_10"]
    assert default["averaged"][nr] == {1: 30, 2: 28}.get(rel, default["averaged"][nr])
    assert default["averaged"][nr] < 31


@pytest.mark.shared
def test_missing_queries_count_zero_as_in_out_test_aqc(shared_data: Path, cli: Cli) -> None:
    """out.test.aqc is trec_eval -c -q on results.trunc (no line for query 302)."""
    te = shared_data / "trec_eval_test"
    lines = (te / "results.trunc").read_text().splitlines()
    trunc = Path("results.trunc.trec")
    trunc.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in lines))
    _ingest(cli, te / "qrels.test", {"trunc": trunc})
    report = _eval_json(cli, "--rel", "1", "--key-rel", "1", "--average", "trec_eval")
    expected = {}
    for line in (te / "out.test.aqc").read_text().splitlines():
        name, qid, value = line.split()
        if qid == "all" and name in names(1):
            expected[names(1)[name]] = float(value)
    assert len(expected) == 3
    for name, value in expected.items():
        assert report["runs"]["trunc"]["mean"][name] == pytest.approx(value, abs=5e-5)
    assert report["runs"]["trunc"]["per_query"]["302"]["nDCG@10"] == 0.0


@pytest.mark.shared
def test_dl19_key_recall_over_all_43_queries(shared_data: Path, cli: Cli) -> None:
    """DL19: 7 queries have no grade-3 passage; trec_eval -c counts them 0 in recall.10 -l 3."""
    dl = shared_data / "trec-dl"
    qrels = dl / "qrels" / "qrels.dl19-passage.txt"
    run = sorted((dl / "runs" / "dl19").glob("*.trec"))[0]
    _ingest(cli, qrels, {"r": run})
    default = _eval_json(cli)
    report = _eval_json(cli, "--average", "trec_eval")
    assert default["averaged"]["R(rel=3)@10"] == 36
    assert report["averaged"]["R(rel=3)@10"] == 43
    qids, at3 = _pytrec(qrels, run, 3)
    expected = _trec_eval_c(qids, at3, "recall_10")
    assert report["runs"]["r"]["mean"]["R(rel=3)@10"] == pytest.approx(expected, abs=1e-9)
    assert default["runs"]["r"]["mean"]["R(rel=3)@10"] == pytest.approx(expected * 43 / 36)


@pytest.fixture
def small(write: Writer, cli: Cli, prebuilt: Prebuilt) -> None:
    """tests/test_metrics_cli.py's collection: q3 has no relevant doc, q4 is in no run."""

    def build() -> None:
        _ingest(cli, write("qrels.txt", QRELS), {"base": write("base.trec", BASE)})
        assert cli("ingest", "run", write("cand.trec", CAND), "--name", "cand").code == 0

    prebuilt(build)


def test_eval_table_says_how_it_averages(small: None, cli: Cli) -> None:
    done = cli("eval", "--average", "trec_eval", "--resamples", "20")
    assert done.code == 0, done.err
    assert "queries averaged (as trec_eval -c: a query with no doc at a measure's threshold" in (
        done.out
    )
    assert "nDCG@10 4, R(rel=3)@10 4, nR@10 4, Judged@10 4" in done.out
    report = _eval_json(cli, "--average", "trec_eval")
    assert report["runs"]["base"]["per_query"]["q3"]["nDCG@10"] == 0.0  # null by default
    assert _eval_json(cli)["runs"]["base"]["per_query"]["q3"]["nDCG@10"] is None


def test_compare_tests_over_the_same_queries(small: None, cli: Cli) -> None:
    done = cli("compare", "base", "cand", "--average", "trec_eval", "--force", "--format", "json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["average"] == "trec_eval"
    mean = {r: report["runs"][r]["mean"] for r in ("base", "cand")}
    for row in report["comparisons"]:
        assert row["n"] == 4
        assert row["delta"] == pytest.approx(
            mean["cand"][row["measure"]] - mean["base"][row["measure"]], abs=1e-12
        )
        low, high = row["ci95"]
        assert low <= row["delta"] <= high
    table = cli("compare", "base", "cand", "--average", "trec_eval", "--force")
    assert "as trec_eval -c" in table.out
