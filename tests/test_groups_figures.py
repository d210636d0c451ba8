"""`eval --by group` and `compare --by group` against figures worked out by hand.

nR@10 (grade >= 2 relevant) on 11 queries, each with two relevant docs r1, r2 and one n1 of
grade 0:
- q1..q8, group `wide`: base ranks r1 r2 n1 (nR 1.0), cand r1 n1 (0.5): difference -0.5 each;
- q9, groups `mixed` and `single`: base n1 (0.0), cand r1 r2 (1.0): +1.0;
- q10, group `mixed`: base r1 n1 (0.5), cand n1 (0.0): -0.5;
- q11, no group: base r1 (0.5), cand r2 (0.5): 0.
Overall: base 9/11, cand 5.5/11, difference -3.5/11 (about -0.318).
- wide: n 8, difference -0.5, every resample -0.5 so the interval is [-0.5, -0.5]; margin 0 <
  0.318: not too small. Sign flips: |mean| reaches 0.5 only when all 8 signs agree, 2/256, so
  p is about 0.0078; the other two tests have p = 1, so p(Holm) = 3 p (a family of 3).
- mixed: n 2, difference (1.0 - 0.5) / 2 = 0.25; two queries resample to -0.5, 0.25 or 1.0 with
  probabilities 1/4, 1/2, 1/4, so the interval is exactly [-0.5, 1.0]; margin 0.75 >= 0.318:
  too small. Every sign flip gives |mean| 0.75 or 0.25 >= 0.25: p = 1.
- single: n 1, +1.0, [1.0, 1.0], p = 1: too small (fewer than 2 queries).
Means (eval): the effect is the spread of the overall means, 9/11 - 5.5/11 = 3.5/11. mixed:
base (0, 0.5) mean 0.25, interval [0, 0.5], margin 0.25 < 0.318: not too small; cand (1, 0)
mean 0.5, interval [0, 1], margin 0.5: too small.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

import judgepool as jp
from tests.conftest import REPO, CliResult
from tests.fixtures_databases import Prebuilt

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
EFFECT = 3.5 / 11
BASE = {**{i: "r1 r2 n1" for i in range(1, 9)}, 9: "n1", 10: "r1 n1", 11: "r1"}
CAND = {**{i: "r1 n1" for i in range(1, 9)}, 9: "r1 r2", 10: "n1", 11: "r2"}


def _run(name: str, ranked: dict[int, str]) -> str:
    return "".join(
        f"q{q} Q0 q{q}-{d} {r} {10 - r} {name}\n"
        for q, docs in ranked.items()
        for r, d in enumerate(docs.split(), start=1)
    )


@pytest.fixture
def db(cli: Cli, write: Writer, prebuilt: Prebuilt) -> None:
    def build() -> None:
        qrels = "".join(
            f"q{q} 0 q{q}-{d} {g}\n"
            for q in range(1, 12)
            for d, g in (("r1", 2), ("r2", 2), ("n1", 0))
        )
        groups = (
            "".join(f"q{q}\twide\n" for q in range(1, 9)) + "q9\tmixed\nq9\tsingle\nq10\tmixed\n"
        )
        topics = "".join(f"q{q}\tquestion {q}\n" for q in range(1, 12))
        for args in (
            (
                "ingest",
                "queries",
                write("topics.tsv", topics),
                "--groups",
                write("groups.tsv", groups),
            ),
            ("ingest", "qrels", write("qrels.txt", qrels)),
            (
                "ingest",
                "run",
                write("base.trec", _run("base", BASE)),
                write("cand.trec", _run("cand", CAND)),
            ),
        ):
            assert cli(*args).code == 0

    prebuilt(build)


def test_compare_by_group_by_hand(db: None, cli: Cli) -> None:
    done = cli("compare", "base", "cand", "--measure", "nR@10", "--by", "group", "--format", "json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    overall = report["comparisons"][0]
    assert overall["delta"] == pytest.approx(-EFFECT)
    groups = report["groups"]
    assert groups["queries"] == {"mixed": 2, "single": 1, "wide": 8} and groups["ungrouped"] == 1
    assert groups["tests"] == 3
    rows = {r["group"]: r for r in groups["comparisons"]}
    wide, mixed, single = rows["wide"], rows["mixed"], rows["single"]
    assert (wide["n"], wide["delta"], wide["ci95"]) == (8, -0.5, [-0.5, -0.5])
    assert 0.004 < wide["p"] < 0.013  # 2/256 = 0.0078, give or take the 10,000 flips
    assert wide["p_holm"] == pytest.approx(3 * wide["p"])
    assert wide["significant"] is True and wide["too_small"] is False
    assert (mixed["n"], mixed["delta"], mixed["ci95"], mixed["p"]) == (2, 0.25, [-0.5, 1.0], 1.0)
    assert mixed["too_small"] is True and mixed["p_holm"] == 1.0
    assert (single["n"], single["delta"], single["ci95"], single["p"]) == (1, 1.0, [1.0, 1.0], 1.0)
    assert single["too_small"] is True and single["significant"] is False
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    evaluated = cli("eval", "--measure", "nR@10", "--by", "group", "--format", "json")
    jsonschema.validate(json.loads(evaluated.out), schema)
    # The overall comparison keeps its own Holm family: --by group changes nothing of it.
    plain = cli("compare", "base", "cand", "--measure", "nR@10", "--format", "json")
    assert json.loads(plain.out)["comparisons"] == report["comparisons"]


def test_eval_by_group_by_hand(db: None, cli: Cli) -> None:
    done = cli("eval", "--measure", "nR@10", "--by", "group", "--format", "json")
    assert done.code == 0, done.err
    means = {(m["group"], m["run"]): m for m in json.loads(done.out)["groups"]["means"]}
    assert means[("wide", "base")]["mean"] == 1.0 and means[("wide", "cand")]["mean"] == 0.5
    assert means[("wide", "base")]["ci95"] == [1.0, 1.0]
    assert means[("wide", "base")]["too_small"] is False
    mixed_base, mixed_cand = means[("mixed", "base")], means[("mixed", "cand")]
    assert (mixed_base["mean"], mixed_base["ci95"], mixed_base["too_small"]) == (
        0.25,
        [0.0, 0.5],
        False,
    )
    assert (mixed_cand["mean"], mixed_cand["ci95"], mixed_cand["too_small"]) == (
        0.5,
        [0.0, 1.0],
        True,
    )
    assert means[("single", "base")]["n"] == 1 and means[("single", "cand")]["too_small"] is True
    table = cli("eval", "--measure", "nR@10", "--by", "group")
    assert "by group" in table.out and "1 queries are in no group" in table.out
    line = next(x for x in table.out.splitlines() if x.startswith("mixed"))
    assert line.split()[:3] == ["mixed", "nR@10", "2"] and line.endswith("too small")


def test_one_run_has_no_effect_to_resolve(db: None, cli: Cli) -> None:
    done = cli("eval", "--run", "base", "--measure", "nR@10", "--by", "group", "--format", "json")
    marks = {m["group"]: m["too_small"] for m in json.loads(done.out)["groups"]["means"]}
    assert marks == {"mixed": None, "single": True, "wide": None}


def test_the_library_and_the_csv_carry_the_same_figures(db: None, cli: Cli) -> None:
    database = jp.open()
    ev = database.evaluate(["base", "cand"], measures=["nR@10"], by="group")
    assert ev.groups.filter(group="mixed", run="cand")["ci_high"].item() == 1.0
    cmp = database.compare("base", "cand", measures=["nR@10"], by="group")
    wide = cmp.groups.filter(group="wide")
    assert wide["delta"].item() == -0.5 and wide["too_small"].item() is False
    assert cmp.to_json()["groups"]["tests"] == 3
    rows = cli(
        "compare", "base", "cand", "--measure", "nR@10", "--by", "group", "--format", "csv"
    ).out.splitlines()
    assert rows[0].startswith("level,group,baseline,candidate,measure,n,delta")
    assert rows[1].startswith("chunk,mixed,base,cand,nR@10,2,0.25,-0.5,1.0,1.0,1.0,False,True")


def test_by_group_without_groups_is_refused(cli: Cli, write: Writer) -> None:
    assert cli("ingest", "qrels", write("qrels.txt", "q1 0 d1 1\n")).code == 0
    assert cli("ingest", "run", write("a.trec", "q1 Q0 d1 1 1 a\n")).code == 0
    done = cli("eval", "--by", "group")
    assert done.code == 2 and "no query has a group" in done.err and "--groups" in done.err
