"""Judges against judges: the ranking of runs under each judge with Kendall's tau (`judges rank`,
`compare --by-judge`), their agreement (`judges agreement`, the Audit page's judge-vs-judge
panel), and the statistics against reference implementations."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from judgepool.metrics.by_judge import rank_by_judge
from judgepool.metrics.judges import agreement_from_grades, judges_agreement
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.stats.agreement import alpha_of_units, kendall_tau
from tests.conftest import CliResult
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]
#: The holes of run A only, and those of run B only (tests/judge_fixtures.py).
A_HOLES = [("q1", "c1"), ("q1", "c3"), ("q1", "c5"), ("q2", "c7"), ("q3", "c10")]
B_HOLES = [("q1", "c2"), ("q1", "c6")]


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    """Judge X likes what run A found, judge Y what run B found: they rank A and B oppositely."""
    store = collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    labels = [Judgment(q, d, 3, "judge", "judge-x") for q, d in A_HOLES]
    labels += [Judgment(q, d, 0, "judge", "judge-x") for q, d in B_HOLES]
    labels += [Judgment(q, d, 0, "judge", "judge-y") for q, d in A_HOLES]
    labels += [Judgment(q, d, 3, "judge", "judge-y") for q, d in B_HOLES]
    write_judgments(store, labels)
    return store


def test_the_ranking_depends_on_the_judge(store: Store) -> None:
    found = rank_by_judge(store, ["A", "B"], level="chunk", baseline="A", resamples=300)
    ranks = {j.labeller: j.ranks for j in found.judges}
    assert ranks == {"judge-x": {"A": 1, "B": 2}, "judge-y": {"A": 2, "B": 1}}
    assert found.tau == (("judge-x", "judge-y", -1.0),)
    assert not found.same_order
    deltas = {j.labeller: j.deltas[0] for j in found.judges}
    assert deltas["judge-x"].delta is not None and deltas["judge-x"].delta < 0
    assert deltas["judge-y"].delta is not None and deltas["judge-y"].delta > 0
    assert all(j.under_gate == ("A",) for j in found.judges)  # c9 has no text: A 0.889


def test_judges_rank_on_the_command_line(store: Store, cli: Cli) -> None:
    result = cli(
        "judges", "rank", "--run", "A", "--run", "B", "--baseline", "A", "--resamples", "300"
    )
    assert result.code == 0, result.err
    assert "THE ORDER OF THE RUNS DEPENDS ON THE JUDGE" in result.out
    assert re.search(r"^J1\s+J2\s+-1\.000$", result.out, flags=re.M)
    assert "J1 = judge-x" in result.out and "J2 = judge-y" in result.out
    data = json.loads(cli("judges", "rank", "--format", "json", "--resamples", "300").out)
    assert data["kendall_tau"] == [{"first": "judge-x", "second": "judge-y", "tau": -1.0}]
    one = cli("judges", "rank", "--judge", "judge-x")
    assert one.code == 2 and "needs two" in one.err


@pytest.mark.slow
def test_compare_by_judge(store: Store, cli: Cli) -> None:
    table = cli("compare", "A", "B", "--force", "--by-judge", "--resamples", "300")
    assert table.code == 0, table.err
    assert "ranking of 2 runs by nDCG@10 under each of 2 judges" in table.out
    assert "the verdicts" in table.out
    report = json.loads(
        cli(
            "compare", "A", "B", "--force", "--by-judge", "--resamples", "300", "--format", "json"
        ).out
    )
    by_judge = report["by_judge"]
    assert [j["labeller"] for j in by_judge["judges"]] == ["judge-x", "judge-y"]
    assert by_judge["same_order"] is False and by_judge["baseline"] == "A"
    assert by_judge["kendall_tau"][0]["tau"] == -1.0
    plain = json.loads(
        cli("compare", "A", "B", "--force", "--resamples", "300", "--format", "json").out
    )
    assert plain["by_judge"] is None


def test_judges_agreement(store: Store, cli: Cli) -> None:
    found = judges_agreement(store, "chunk", ["judge-x", "judge-y"])
    (pair,) = found.pairwise
    assert pair.pairs == 7 and pair.exact == 0.0
    # p_o = 0, p_e = (2*5 + 5*2) / 49: kappa = -(20/49) / (29/49)
    assert pair.kappa == pytest.approx(-20 / 29, abs=1e-12)
    assert pair.confusion[3][0] == 5 and pair.confusion[0][3] == 2
    assert found.units == 7
    result = cli("judges", "agreement")
    assert result.code == 0, result.err
    assert "2 judges, 7 pairs labelled by at least two" in result.out and "-0.690" in result.out


def test_alpha_and_tau_against_the_references() -> None:
    krippendorff = pytest.importorskip("krippendorff", reason="the test extra's krippendorff")
    from scipy.stats import kendalltau

    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders, 12 units.
    n = None
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    assert round(alpha_of_units(data, metric="nominal"), 3) == 0.743
    assert round(alpha_of_units(data, metric="ordinal"), 3) == 0.815
    assert round(alpha_of_units(data, metric="interval"), 3) == 0.849
    rng = np.random.default_rng(16)
    for _ in range(20):
        table = rng.integers(0, 4, size=(3, 40)).astype(float)
        table[rng.random(table.shape) < 0.25] = np.nan
        for level in ("nominal", "ordinal", "interval"):
            want = krippendorff.alpha(
                reliability_data=table, level_of_measurement=level, value_domain=[0, 1, 2, 3]
            )
            assert alpha_of_units(table, 4, level) == pytest.approx(want, abs=1e-9)
        x, y = rng.integers(0, 4, size=9), rng.integers(0, 4, size=9)
        assert kendall_tau(list(x), list(y)) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    grades = {"a": {("q", "1"): 0, ("q", "2"): 3}, "b": {("q", "1"): 0}, "c": {("q", "2"): 2}}
    found = agreement_from_grades(grades)
    assert found.units == 2 and [p.pairs for p in found.pairwise] == [1, 1, 0]


def test_the_audit_page_shows_judge_vs_judge(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.dashboard_db import open_page

    monkeypatch.setenv("JUDGEPOOL_DB", str(store.path))
    at = open_page("audit", tab="Agreement & calibration")
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    want = judges_agreement(store, "chunk", ["judge-x", "judge-y"])
    assert metrics["Pairs labelled by ≥ 2"] == "7"
    assert metrics["Krippendorff's α (ordinal)"] == f"{want.alpha_ordinal:.3f}"
    table = next(el.value for el in at.dataframe if "quadratic κ" in el.value.columns)
    assert table["κ (0-3)"].round(3).tolist() == [-0.69]
