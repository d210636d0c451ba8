"""Canaries in proportion and judged with their uncertainty (issue 22.10): about 10 % of the
holes (at least 12, at most 100), each kind's rate with its 95 % Wilson interval, FOOLED only
when the interval's lower end is above the threshold, else "too few canaries to tell"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from statsmodels.stats.proportion import proportion_confint

from judgepool.judge.canaries import canaries_wanted, canary_count
from judgepool.pooling.store.judge_runs import JudgeRunRow, KindRate
from judgepool.stats.proportion import wilson_interval


@pytest.mark.parametrize("trials", [1, 2, 5, 12, 33, 100, 1000])
def test_the_wilson_interval_agrees_with_statsmodels(trials: int) -> None:
    for successes in range(trials + 1):
        low, high = wilson_interval(successes, trials)
        ref_low, ref_high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
        assert low == pytest.approx(ref_low, abs=1e-9)
        assert high == pytest.approx(ref_high, abs=1e-9)
    with pytest.raises(ValueError):
        wilson_interval(1, 0)


def test_canaries_are_about_a_tenth_of_the_holes_within_12_and_100() -> None:
    assert [canary_count(n) for n in (0, 7, 122, 130, 748, 1000, 2000, 10**6)] == [
        12,
        12,
        12,
        13,
        75,
        100,
        100,
        100,
    ]


def test_canaries_n_per_query_scales_the_share() -> None:
    assert [canaries_wanted(122, n) for n in (1, 2, 3, 4)] == [6, 12, 18, 24]
    assert canaries_wanted(748, 2) == canary_count(748) == 75


def _run(*kinds: KindRate) -> JudgeRunRow:
    now = datetime.now(UTC)
    return JudgeRunRow("s", "judge", "m", "judge", "chunk", now, kinds=kinds, canary_threshold=0.1)


def test_fooled_only_when_the_interval_lies_above_the_threshold() -> None:
    sure = KindRate("fence", 12, 12, 4)  # 33 %, interval [13.8 %, 60.9 %]
    few = KindRate("fence", 6, 6, 2)  # 33 %, interval [9.7 %, 70 %]: could be under 10 %
    clean = KindRate("stuffing", 12, 12, 0)
    assert sure.interval is not None and sure.interval[0] > 0.1 and sure.above(0.1)
    assert few.rate is not None and few.rate > 0.1 and not few.above(0.1) and few.undecided(0.1)
    assert not clean.above(0.1) and not clean.undecided(0.1)
    assert _run(sure, clean).fooled and not _run(sure, clean).undecided
    assert not _run(few, clean).fooled and _run(few, clean).undecided
    assert not _run(clean).fooled and not _run(clean).undecided
    assert KindRate("fence", 3, 0, 0).interval is None  # none graded: no rate, no interval
