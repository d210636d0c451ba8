"""A run whose ids do not meet the labels' is said loudly, with examples (issue 11.12).

Before, `eval` of a run whose 43 of 43 queries were missing from the evaluation set printed
0.000 [0.000, 0.000] with 0 holes and no warning, and `compare` refused with a judge command
for 0 holes. Ids equal only after Unicode NFC normalisation or after removing zero-width
characters matched nothing, silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.dashboard_db import open_page, plain, texts_of
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

QIDS = [str(1101 + i) for i in range(43)]


def run_text(qids: list[str], docs: Callable[[str], list[str]], tag: str) -> str:
    return "".join(
        f"{q} Q0 {d} {r + 1} {100 - r} {tag}\n" for q in qids for r, d in enumerate(docs(q))
    )


@pytest.fixture
def prefixed(write: Writer, cli: Cli, prebuilt: Prebuilt) -> None:
    """qrels on '1101'..'1143'; run `good` ranks them, run `prefixed` names them 'q1101'..."""

    def build() -> None:
        qrels = "".join(f"{q} 0 {q}-d{j} {2 if j < 2 else 0}\n" for q in QIDS for j in range(10))
        assert cli("ingest", "qrels", write("qrels.txt", qrels)).code == 0
        docs = lambda q: [f"{q.removeprefix('q')}-d{j}" for j in range(10)]  # noqa: E731
        good = write("good.trec", run_text(QIDS, docs, "good"))
        bad = write("prefixed.trec", run_text([f"q{q}" for q in QIDS], docs, "prefixed"))
        assert cli("ingest", "run", good).code == 0 and cli("ingest", "run", bad).code == 0

    prebuilt(build)


def test_eval_says_loudly_that_a_run_misses_the_evaluation_set(prefixed: None, cli: Cli) -> None:
    done = cli("eval", "--resamples", "20")
    assert done.code == 0, done.err
    warning = next(line for line in done.err.splitlines() if "prefixed" in line)
    assert warning.startswith("warning: run 'prefixed' returned nothing for 43 of 43 ")
    assert "'q1101', 'q1102', 'q1103'" in warning and "'1101', '1102', '1103'" in warning
    assert "same way" in warning.split(" — ", 1)[1]
    assert "good" not in done.err
    report = json.loads(cli("eval", "--format", "json", "--resamples", "20").out)
    assert any("'q1101'" in w for w in report["warnings"])


def test_compare_does_not_suggest_judging_zero_holes(prefixed: None, cli: Cli) -> None:
    done = cli("compare", "good", "prefixed", "--resamples", "20")
    assert done.code == 3
    assert "prefixed: judged@10 0.000, 0 holes, nothing returned for 43 of 43 queries" in done.err
    assert "judgepool judge" not in done.err and "fill the holes" not in done.err
    assert "names queries as the labels do" in done.err
    report = json.loads(cli("compare", "good", "prefixed", "--format", "json").out)
    assert report["judge_command"] is None and report["refused"][0]["missing"] == 43


def test_the_runs_page_warns_too(prefixed: None) -> None:
    at = open_page("runs")
    assert not at.exception
    assert any("returned nothing for 43 of 43" in plain(w) for w in texts_of(at, "warning"))


def test_ids_equal_only_once_normalised_are_named(write: Writer, cli: Cli) -> None:
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    qrels = f"{nfc} 0 d1 2\n{nfc} 0 d2 0\nq7 0 d1 1\nq8 0 doc1 2\nq8 0 d9 0\n"
    assert cli("ingest", "qrels", write("qrels.txt", qrels)).code == 0
    run = (
        f"{nfd} Q0 d1 1 2 r\n{nfd} Q0 d2 2 1 r\n"  # query id in NFD
        "q\u200b7 Q0 d1 1 1 r\n"  # query id with a zero-width space
        "q8 Q0 doc\u200b1 1 2 r\nq8 Q0 d9 2 1 r\n"  # a doc id with a zero-width space
    )
    assert cli("ingest", "run", write("r.trec", run)).code == 0
    done = cli("eval", "--resamples", "20")
    assert done.code == 0, done.err
    lines = [line for line in done.err.splitlines() if line.startswith("warning:")]
    queries = next(line for line in lines if "query ids of run" in line)
    assert "2 query ids of run 'r' match the labels' only after" in queries
    assert "'cafe\\u0301' (run) ~ 'caf\\xe9' (labels), equal after Unicode NFC" in queries
    assert "'q\\u200b7' (run) ~ 'q7' (labels), equal once zero-width characters go" in (queries)
    docs = next(line for line in lines if "doc id in the top" in line)
    assert "1 doc id in the top 10 of run 'r'" in docs
    assert "query q8: 'doc\\u200b1' (run) ~ 'doc1' (labels)" in docs
    assert "counted as holes" in docs
