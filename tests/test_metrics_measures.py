"""Measures are values: their names print and parse as themselves, as ir-measures writes them."""

from __future__ import annotations

import ir_measures
import pytest

from judgepool.errors import UsageError
from judgepool.metrics.measures import Measure, default_measures, parse_measure


@pytest.mark.parametrize(
    "name", ["nDCG@10", "R(rel=3)@10", "R@5", "nR@10", "nR(rel=1)@20", "Judged@10", "Judged@1"]
)
def test_names_round_trip(name: str) -> None:
    assert str(parse_measure(name)) == name


def test_names_agree_with_ir_measures() -> None:
    for measure in default_measures(10, 2, 3):  # nR too: judgepool registers it with ir-measures
        assert str(ir_measures.parse_measure(str(measure))) == str(measure)
    assert str(ir_measures.parse_measure("R(rel=1)@10")) == str(parse_measure("R(rel=1)@10"))


def test_defaults_and_equality() -> None:
    assert [str(m) for m in default_measures()] == ["nDCG@10", "R(rel=3)@10", "nR@10", "Judged@10"]
    assert [str(m) for m in default_measures(5, 1, 2)] == [
        "nDCG@5",
        "R(rel=2)@5",
        "nR(rel=1)@5",
        "Judged@5",
    ]
    assert parse_measure("nR(rel=2)@10") == Measure("nR", 10) == Measure("nR", 10, 2)
    assert parse_measure("R@10") == Measure("R", 10, 1)
    assert len({Measure("nDCG", 10), parse_measure("nDCG@10")}) == 1


def test_thresholds_say_which_queries_count() -> None:
    assert Measure("nDCG", 10).threshold == 1
    assert Measure("R", 10, 3).threshold == 3
    assert Measure("nR", 10).threshold == 2
    assert Measure("Judged", 10).threshold is None


@pytest.mark.parametrize(
    "bad",
    [
        "ndcg@10",
        "bogus@10",
        "nDCG@0",
        "R(rel=0)@10",
        "nR(rel=-1)@10",
        "nR",
        "nDCG(rel=2)@10",
        "P(rel='x')@5",
        "nDCG@10.5",
        "nDCG@@10",
    ],
)
def test_bad_names_are_usage_errors_that_list_the_known_measures(bad: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_measure(bad)
    if "cutoff k=" not in str(caught.value) and "threshold" not in str(caught.value):
        assert "nDCG" in (caught.value.hint or "") and "RR" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("text", "name", "native", "threshold"),
    [
        ("nDCG", "nDCG", False, 1),  # ir-measures' nDCG over the whole ranking
        ("P@10", "P@10", False, 1),
        ("RR(rel=2)@10", "RR(rel=2)@10", False, 2),
        ("AP@100", "AP@100", False, 1),
        ("nDCG@20", "nDCG@20", True, 1),
        ("R@100", "R@100", True, 1),
        ("Judged@20", "Judged@20", True, None),
        ("NumRet", "NumRet", False, None),
        ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10", False, 1),
    ],
)
def test_any_ir_measures_measure_is_read_by_ir_measures(
    text: str, name: str, native: bool, threshold: int | None
) -> None:
    measure = parse_measure(text)
    assert str(measure) == name == str(ir_measures.parse_measure(text))
    assert measure.native is native
    assert measure.threshold == threshold
