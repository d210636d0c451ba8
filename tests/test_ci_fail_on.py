"""`compare --fail-on`: every exit code (0, 2, 3, 4), the rule read from the table's own Holm
verdicts, the JSON naming the rule that failed, and the library's `fail_on`.

The collection is tests/ci_collection.py (fixed seed): `cand` is significantly worse than `base`
on the three effectiveness measures, `better` significantly better; `holey` ranks docs nobody
labelled, so it is under the judged@10 gate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

import judgepool as jp
from judgepool.metrics.regression import Rule, parse_rule
from tests.ci_collection import ingest_with_holey
from tests.conftest import REPO, CliResult
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
DB = "eval.duckdb"
FAST = ("--resamples", "2000")


@pytest.fixture
def db(tmp_path: Path, cli: Cli, prebuilt: Prebuilt) -> Path:
    def build() -> None:
        holey = "".join(
            f"q{i:02d} Q0 new-{i}-{r} {r} {10 - r} holey\n"
            for i in range(1, 31)
            for r in range(1, 4)
        )
        ingest_with_holey(tmp_path, cli, DB, holey)

    prebuilt(build)
    return tmp_path / DB


def compare(cli: Cli, *args: str) -> CliResult:
    return cli("--db", DB, "compare", *args, *FAST)


def test_a_significant_regression_exits_4_and_says_which_rule(db: Path, cli: Cli) -> None:
    done = compare(cli, "base", "cand", "--fail-on", "regression")
    assert done.code == 4, done.err
    assert "--fail-on regression failed: cand is significantly worse than base on nDCG@10" in (
        done.err
    )
    assert "--fail-on regression: failed (regression; exit code 4)" in done.out
    # The rule reads the table: every watched difference it names is significant there.
    table = compare(cli, "base", "cand", "--format", "json")
    assert table.code == 0
    assert all(c["significant"] and c["delta"] < 0 for c in json.loads(table.out)["comparisons"])


def test_no_regression_exits_0_and_any_change_fails_on_a_gain(db: Path, cli: Cli) -> None:
    assert compare(cli, "base", "better", "--fail-on", "regression").code == 0
    done = compare(cli, "base", "better", "--fail-on", "any-change", "--format", "json")
    assert done.code == 4
    report = json.loads(done.out)["fail_on"]
    assert report["failed_rules"] == ["any-change"] and report["exit_code"] == 4
    assert {b["measure"] for b in report["breaches"]} == {"nDCG@10", "R(rel=3)@10", "nR@10"}
    assert all(b["delta"] > 0 for b in report["breaches"])


def test_the_rule_watches_only_the_measures_it_lists(db: Path, cli: Cli) -> None:
    # cand is significantly worse than base on the three measures; better is better on them.
    done = compare(
        cli,
        "base",
        "cand",
        "better",
        "--fail-on",
        "regression=nR@10",
        "--fail-on",
        "any-change=R(rel=3)@10",
        "--format",
        "json",
    )
    assert done.code == 4
    report = json.loads(done.out)
    assert report["fail_on"]["watched"] == {
        "regression=nR@10": ["nR@10"],
        "any-change=R(rel=3)@10": ["R(rel=3)@10"],
    }
    assert report["fail_on"]["failed_rules"] == ["regression=nR@10", "any-change=R(rel=3)@10"]
    assert sorted((b["rule"], b["candidate"]) for b in report["fail_on"]["breaches"]) == [
        ("any-change=R(rel=3)@10", "better"),
        ("any-change=R(rel=3)@10", "cand"),
        ("regression=nR@10", "cand"),
    ]
    assert report["verdicts"] == {"cand": "worse", "better": "better"}
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)


def test_the_gate_still_refuses_with_exit_3(db: Path, cli: Cli) -> None:
    done = compare(cli, "base", "holey", "--fail-on", "regression", "--format", "json")
    assert done.code == 3
    report = json.loads(done.out)
    assert report["comparisons"] == [] and report["fail_on"]["exit_code"] == 3
    assert report["verdicts"] == {"holey": "refused"}
    assert "comparison refused" in done.err


def test_forced_past_the_gate_a_ci_rule_decides_nothing(db: Path, cli: Cli) -> None:
    """--force shows the figures (UNRELIABLE) but a --fail-on gate exits 3 on them, whatever
    the rules would say; without --fail-on, --force keeps exiting 0 as before."""
    done = compare(cli, "base", "holey", "--fail-on", "regression", "--force", "--format", "json")
    assert done.code == 3
    report = json.loads(done.out)
    assert report["unreliable"] and report["comparisons"]
    assert report["fail_on"]["unreliable"] and report["fail_on"]["failed_rules"] == ["regression"]
    assert "--fail-on cannot decide on a comparison forced past the judged@10 gate" in done.err
    assert "fill the holes with: judgepool --db eval.duckdb judge" in done.err
    assert compare(cli, "base", "holey", "--force").code == 0


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("regression=Judged@10", "Judged@k is the gate's input"),
        ("regression=RR@10", "not among the compared measures"),
        ("shrinkage", "unknown --fail-on rule"),
        ("regression=nDCG@10,", "has an empty measure"),
        ("regression=nDCG@", "cannot use measure"),
    ],
)
def test_a_rule_that_cannot_work_is_refused_before_comparing(
    db: Path, cli: Cli, rule: str, said: str
) -> None:
    done = compare(cli, "base", "cand", "--fail-on", rule)
    assert done.code == 2 and said in done.err and " — " in done.err
    assert done.out == ""


def test_a_rule_on_a_measure_added_with_measure(db: Path, cli: Cli) -> None:
    done = compare(
        cli,
        "base",
        "cand",
        "--measure",
        "RR@10",
        "--measure",
        "nDCG@10",
        "--fail-on",
        "regression=RR@10",
        "--format",
        "json",
    )
    assert done.code in (0, 4)
    report = json.loads(done.out)
    assert report["fail_on"]["watched"] == {"regression=RR@10": ["RR@10"]}
    rr = next(c for c in report["comparisons"] if c["measure"] == "RR@10")
    assert (done.code == 4) == (rr["significant"] and rr["delta"] < 0)


def test_measure_lists_split_outside_parentheses() -> None:
    assert parse_rule("regression=nDCG@10, R(rel=3)@10") == Rule(
        "regression", ("nDCG@10", "R(rel=3)@10")
    )
    assert parse_rule("any-change") == Rule("any-change")
    assert str(parse_rule("regression=nR(rel=2)@10")) == "regression=nR@10"


def test_the_library_gives_the_same_verdict(db: Path) -> None:
    database = jp.open(db)
    cmp = database.compare("base", ["cand", "better"], fail_on="regression", resamples=2000)
    assert cmp.failed_rules == ["regression"] and cmp.exit_code == 4
    assert cmp.verdicts == {"cand": "worse", "better": "better"}
    with pytest.raises(jp.errors.RuleFailedError) as caught:
        cmp.raise_for_rules()
    assert caught.value.exit_code == 4 and "cand is significantly worse" in str(caught.value)
    ok = database.compare("base", "better", fail_on=["regression"], resamples=2000)
    assert ok.failed_rules == [] and ok.exit_code == 0
    ok.raise_for_rules()
    forced = database.compare("base", "holey", fail_on="regression", force=True, resamples=2000)
    assert forced.exit_code == 3
    with pytest.raises(jp.errors.GateRefusedError):
        forced.raise_for_rules()
    assert forced.to_json()["fail_on"]["unreliable"] is True
