"""The verdict on a plain figure once an audit exists (metrics/trust_verdict.py): a plain interval
that a biased judge pushed off the truth is not called robust, a judge the audit finds exact is
not blamed, and a small audit says how many queries would tell. Seeded simulations over a
synthetic population of paired differences (the DL19/DL20 ones are bench/bench_ppi_verdicts.py's).
"""

from __future__ import annotations

import numpy as np
import pytest

from judgepool.metrics.ppi_ratio import corrected_ratio
from judgepool.metrics.trust_verdict import MIN_AUDIT, judge_verdict
from judgepool.stats.tdist import t_quantile

SIZE = 43  # TREC DL 2019's judged queries


def _plain(values: np.ndarray) -> tuple[float, tuple[float, float]]:
    """The plain figure: the mean and a t interval over every query (the bootstrap's stand-in)."""
    mean = float(values.mean())
    half = t_quantile(0.975, values.size - 1) * float(values.std(ddof=1)) / np.sqrt(values.size)
    return mean, (mean - half, mean + half)


def _population(rng: np.random.Generator) -> np.ndarray:
    return np.clip(rng.normal(0.22, 0.2, SIZE), -1.0, 1.0)


def test_a_harsh_judges_plain_miss_is_never_called_robust() -> None:
    # issue 21, item 3: a harsh judge halves most gains; the plain interval misses the truth,
    # and "robust" used to be said of it in 9 of 9 draws.
    rng = np.random.default_rng(21)
    said, misses, covered, draws = 0, 0, 0, 0
    for _ in range(400):
        y = _population(rng)
        truth = float(y.mean())
        f = np.clip(0.3 * y + rng.normal(0.0, 0.08, SIZE), -1.0, 1.0)
        at = np.sort(rng.choice(SIZE, MIN_AUDIT, replace=False))
        effective = f.copy()
        effective[at] = y[at]  # the plain figure reads the audited queries' human labels
        estimate, plain = _plain(effective)
        corrected = corrected_ratio(
            f, np.ones(SIZE), y[at], np.ones(at.size), at, bounds=(-1.0, 1.0)
        )
        verdict = judge_verdict(estimate, plain, corrected)
        assert verdict is not None and corrected.ci is not None
        draws += 1
        covered += corrected.ci[0] <= truth <= corrected.ci[1]
        if not plain[0] <= truth <= plain[1]:
            misses += 1
            said += verdict.word == "robust"
            assert verdict.word == "judge-biased" or verdict.word == "too small to tell"
    assert misses > 300  # the judge really misleads the plain interval
    assert said == 0
    assert covered / draws >= 0.93


def test_a_judge_biased_verdict_says_by_how_much() -> None:
    rng = np.random.default_rng(2)
    y = _population(rng)
    f = 0.3 * y
    at = np.arange(0, SIZE, 3)
    effective = f.copy()
    effective[at] = y[at]
    estimate, plain = _plain(effective)
    corrected = corrected_ratio(f, np.ones(SIZE), y[at], np.ones(at.size), at)
    verdict = judge_verdict(estimate, plain, corrected)
    assert verdict is not None and verdict.word == "judge-biased"
    assert corrected.estimate.estimate is not None
    assert verdict.shift == pytest.approx(estimate - corrected.estimate.estimate)
    assert verdict.shift < -0.05  # the harsh judge hid a gain
    assert verdict.shift_ci is not None and verdict.shift_ci[1] < 0.0
    assert verdict.sentence().startswith(
        f"judge-biased: the judge's errors moved the figure by {verdict.shift:+.3f} ["
    )


def test_a_perfect_judge_is_not_doubted_and_its_width_stays_near_the_plain_one() -> None:
    # issue 21, item 5: n = 10 of 43 with the audit equal to the judge everywhere
    rng = np.random.default_rng(5)
    for _ in range(50):
        y = _population(rng)
        at = np.sort(rng.choice(SIZE, MIN_AUDIT, replace=False))
        estimate, plain = _plain(y)
        corrected = corrected_ratio(
            y, np.ones(SIZE), y[at], np.ones(at.size), at, bounds=(-1.0, 1.0)
        )
        assert corrected.ci is not None
        assert corrected.ci[0] >= -1.0 and corrected.ci[1] <= 1.0
        assert corrected.ci[1] - corrected.ci[0] <= 1.3 * (plain[1] - plain[0])
        verdict = judge_verdict(estimate, plain, corrected)
        assert verdict is not None and verdict.word == "robust", verdict


def test_a_small_audit_that_found_no_error_is_too_small_to_tell_not_judge_biased() -> None:
    # issue 21, item 5: 6 queries, 3 audited, the audit equal to the judge on every pair: the
    # verdict used to say "judge-dependent"; it must say the audit is too small, and how many.
    f = np.array([0.35, 0.10, 0.62, 0.05, 0.40, 0.28])
    at = np.array([0, 2, 4])
    estimate, plain = _plain(f)
    corrected = corrected_ratio(f, np.ones(6), f[at], np.ones(3), at, bounds=(-1.0, 1.0))
    verdict = judge_verdict(estimate, plain, corrected)
    assert verdict is not None and verdict.word == "too small to tell"
    assert verdict.shift == pytest.approx(0.0, abs=1e-12)
    assert "3 audited queries cannot rule out errors on the other 3" in verdict.sentence()
    assert verdict.needed is not None and verdict.needed > 3


def test_no_verdict_without_a_corrected_interval() -> None:
    f = np.array([0.1, 0.2, 0.3, 0.4])
    corrected = corrected_ratio(f, np.ones(4), f[:1], np.ones(1), [0])
    assert corrected.ci is None
    assert judge_verdict(0.25, (0.0, 0.5), corrected) is None
