"""The statistics: bootstrap intervals cover, A/A comparisons are rarely significant, Holm, seeds.

Simulations call the production functions (`bootstrap_means`, `percentile_interval`,
`sign_flip_pvalues`, `holm`) with many simulated "evaluations" side by side as columns; each
column is an independent data set drawn from a known distribution. Columns share one resample
matrix per call, which leaves each column's interval exactly as valid as alone; batches with
different seeds keep the shared resamples from steering the whole estimate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray

from judgepool.metrics.bootstrap import (
    bootstrap_means,
    holm,
    percentile_interval,
    sign_flip_pvalues,
)

Draw = Callable[[np.random.Generator, tuple[int, int]], NDArray[np.float64]]


def _beta(rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.float64]:
    """Skewed values in [0, 1], like per-query nDCG: Beta(0.8, 1.6), mean 1/3."""
    return rng.beta(0.8, 1.6, size=shape)


def _zero_heavy(rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.float64]:
    """Half the queries score exactly 0, like key-doc recall: mean 0.5 x 0.5 = 0.25."""
    return np.where(rng.random(shape) < 0.5, 0.0, rng.beta(2.0, 2.0, size=shape))


@pytest.mark.parametrize(("draw", "true_mean"), [(_beta, 1 / 3), (_zero_heavy, 0.25)])
def test_bootstrap_interval_covers_the_true_mean_93_to_97_percent(
    draw: Draw, true_mean: float
) -> None:
    """6,000 simulated evaluations of 80 queries each; the 95% interval must cover 93-97%.

    6,000 trials put the standard error of the coverage at 0.0028, so a method with true
    coverage 0.95 lands in the band with near certainty, and one at 0.92 or 0.98 cannot pass.
    1,000 resamples per interval instead of the default 10,000: coverage is a property of the
    percentile method; the resample count only adds Monte-Carlo noise to each endpoint, small
    next to the interval's width at 1,000 already.
    """
    rng = np.random.default_rng(2024)
    covered = []
    for batch in range(12):
        values = draw(rng, (80, 500))
        low, high = percentile_interval(bootstrap_means(values, 1_000, seed=batch))
        covered.append((low <= true_mean) & (true_mean <= high))
    coverage = float(np.concatenate(covered).mean())
    assert 0.93 <= coverage <= 0.97, coverage


def _aa_pair(rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.float64]:
    """Per-query differences of two runs with the same distribution (a shared query difficulty)."""
    difficulty = rng.beta(1.0, 2.0, size=shape)
    a = np.clip(difficulty + rng.normal(0.0, 0.15, size=shape), 0.0, 1.0)
    b = np.clip(difficulty + rng.normal(0.0, 0.15, size=shape), 0.0, 1.0)
    return a - b


def test_aa_comparison_is_significant_about_5_percent() -> None:
    """2,000 A/A comparisons on 50 queries: p < 0.05 in 3-6.5% of them.

    Under "no difference" the randomisation test's p-value is uniform (up to its resolution,
    1/1,001 here), so about 5% fall under 0.05; the standard error over 2,000 trials is 0.005,
    so the band is 3 standard errors above 5% and 4 below. The lower end catches a test that
    never rejects. The paired bootstrap interval excludes 0 about as often (percentile
    intervals run slightly narrow at 50 queries, hence its 7% ceiling).
    """
    rng = np.random.default_rng(7)
    rejected, excluded = [], []
    for batch in range(4):
        diffs = _aa_pair(rng, (50, 500))
        rejected.append(sign_flip_pvalues(diffs, 1_000, seed=batch) < 0.05)
        low, high = percentile_interval(bootstrap_means(diffs, 1_000, seed=batch))
        excluded.append((low > 0) | (high < 0))
    rate = float(np.concatenate(rejected).mean())
    assert 0.03 <= rate <= 0.065, rate
    assert float(np.concatenate(excluded).mean()) <= 0.07


def test_holm_keeps_the_family_wise_rate_under_5_percent() -> None:
    """2,000 calls comparing 4 A/A candidates on 3 measures: any Holm p < 0.05 in <= 6.5%."""
    rng = np.random.default_rng(11)
    family_hits = []
    for batch in range(4):
        diffs = _aa_pair(rng, (50, 500 * 12))
        p = sign_flip_pvalues(diffs, 1_000, seed=batch).reshape(500, 12)
        adjusted = np.apply_along_axis(holm, 1, p)
        family_hits.append((adjusted < 0.05).any(axis=1))
    assert float(np.concatenate(family_hits).mean()) <= 0.065


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max.
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])
    assert holm([]).size == 0


def test_sign_flip_test_is_two_sided_and_exactly_calibrated_on_a_small_case() -> None:
    # Three equal positive differences: only "all +" or "all -" is as extreme: p = 2/8.
    p = sign_flip_pvalues(np.array([[1.0], [1.0], [1.0]]), 20_000, seed=3)
    assert p[0] == pytest.approx(0.25, abs=0.01)
    assert sign_flip_pvalues(np.zeros((5, 1)), 100, seed=1)[0] == 1.0  # no difference at all


def test_bootstrap_is_seeded_and_matches_the_sampling_distribution() -> None:
    rng = np.random.default_rng(5)
    values = rng.random((200, 2))
    first = bootstrap_means(values, 4_000, seed=42)
    assert np.array_equal(first, bootstrap_means(values, 4_000, seed=42))
    assert not np.array_equal(first, bootstrap_means(values, 4_000, seed=43))
    # The resampled means centre on the sample mean with spread sd / sqrt(n).
    assert first.mean(axis=0) == pytest.approx(values.mean(axis=0), abs=2e-3)
    expected_sd = values.std(axis=0) / np.sqrt(values.shape[0])
    assert first.std(axis=0) == pytest.approx(expected_sd, rel=0.05)
    # Joint resampling: the bootstrap of a difference is the difference of the bootstraps.
    paired = bootstrap_means(values[:, [1]] - values[:, [0]], 4_000, seed=42)
    assert paired[:, 0] == pytest.approx(first[:, 1] - first[:, 0], abs=1e-12)


def test_a_constant_has_a_zero_width_interval() -> None:
    low, high = percentile_interval(bootstrap_means(np.full((30, 1), 0.4), 500, seed=1))
    assert (low[0], high[0]) == pytest.approx((0.4, 0.4))
