"""Judge-vs-human agreement: kappas against a textbook example, scikit-learn and simulation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from judgepool.metrics.agreement import agreement, agreement_from
from judgepool.pooling.audit.overrides import override_label
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.stats.agreement import binary_confusion, confusion, kappa
from tests.dashboard_db import JUDGE, build, doc

Writer = Callable[[str, str | bytes], Path]


def pairs_from(matrix: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Paired grades that produce `matrix` (rows human, columns judge)."""
    human, judge = [], []
    for h, row in enumerate(matrix):
        for j, n in enumerate(row):
            human += [h] * n
            judge += [j] * n
    return np.array(human, dtype=np.int64), np.array(judge, dtype=np.int64)


def test_textbook_two_by_two_kappa() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15: p_o = 0.7, p_e = 0.5.
    assert kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-12)


def test_hand_worked_four_level_example() -> None:
    matrix = [[10, 2, 0, 0], [3, 5, 2, 0], [0, 2, 6, 2], [0, 0, 1, 7]]
    ag = agreement_from(*pairs_from(matrix))
    n = 40
    po = (10 + 5 + 6 + 7) / n
    rows, cols = [12, 10, 10, 8], [13, 9, 9, 9]
    pe = sum(r * c for r, c in zip(rows, cols, strict=True)) / n**2
    assert ag.pairs == n and ag.confusion == matrix
    assert ag.exact == pytest.approx(po, abs=1e-12)
    assert ag.kappa == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    # Binary at grade >= 2: human 0-1 = 22, 2-3 = 18; judge 0-1 = 22, 2-3 = 18.
    assert binary_confusion(np.array(matrix)).tolist() == [[20, 2], [2, 16]]
    po2, pe2 = 36 / 40, (22 * 22 + 18 * 18) / 40**2
    assert ag.kappa_binary == pytest.approx((po2 - pe2) / (1 - pe2), abs=1e-12)
    # Leniency: judge >= 2 where human < 2 is the 2 in row 1, column 2; strict: 2 of row 2.
    assert (ag.lenient, ag.strict) == (2, 2)
    assert ag.lenient_rate == pytest.approx(2 / 22) and ag.strict_rate == pytest.approx(2 / 18)


def test_kappas_equal_scikit_learn_on_random_grades() -> None:
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is the reference")
    rng = np.random.default_rng(7)
    for _ in range(20):
        human = rng.integers(0, 4, size=int(rng.integers(5, 300)))
        noise = rng.integers(-1, 2, size=human.size)
        judge = np.clip(human + noise * (rng.random(human.size) < 0.4), 0, 3)
        ag = agreement_from(human, judge)
        labels = [0, 1, 2, 3]
        expected = metrics.cohen_kappa_score(human, judge, labels=labels)
        quadratic = metrics.cohen_kappa_score(human, judge, labels=labels, weights="quadratic")
        binary_ref = metrics.cohen_kappa_score(human >= 2, judge >= 2)
        assert ag.kappa == pytest.approx(expected, abs=1e-12)
        assert ag.kappa_quadratic == pytest.approx(quadratic, abs=1e-12)
        if ag.kappa_binary is not None:
            assert ag.kappa_binary == pytest.approx(binary_ref, abs=1e-12)


def test_simulation_independent_raters_average_zero_and_noisy_raters_hit_the_population() -> None:
    rng = np.random.default_rng(11)
    # Independent raters: kappa's mean over many samples is ~0 (its bias is O(1/n)).
    kappas = [
        agreement_from(rng.integers(0, 4, 400), rng.integers(0, 4, 400)).kappa for _ in range(300)
    ]
    assert abs(float(np.mean([k for k in kappas if k is not None]))) < 0.01
    # A judge that copies the human with probability 0.6, else guesses uniformly: the population
    # kappa with uniform human grades is exactly 0.6.
    estimates = []
    for _ in range(200):
        human = rng.integers(0, 4, 2000)
        judge = np.where(rng.random(2000) < 0.6, human, rng.integers(0, 4, 2000))
        estimates.append(agreement_from(human, judge).kappa)
    assert float(np.mean(estimates)) == pytest.approx(0.6, abs=0.01)


def test_undefined_kappas_are_none_not_zero() -> None:
    same = agreement_from(np.array([2, 2, 2]), np.array([2, 2, 2]))
    assert same.kappa is None and same.kappa_binary is None and same.exact == 1.0
    empty = agreement_from(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert empty.pairs == 0 and empty.kappa is None and empty.lenient_rate is None


def test_grades_outside_zero_to_three_are_excluded_and_counted() -> None:
    ag = agreement_from(np.array([-1, 0, 3, 4]), np.array([0, 0, 3, 3]))
    assert (ag.pairs, ag.excluded) == (2, 2)
    assert confusion(np.array([0, 3]), np.array([0, 3]))[3][3] == 1


def test_agreement_on_the_store_uses_the_latest_label_of_each_side(write: Writer) -> None:
    store = build(Store(), write)
    ag = agreement(store)
    # d00-d03 of 6 queries: humans 3 3 2 2, judge 3 2 2 3 -> 24 pairs, half exact, none lenient.
    assert ag.pairs == 24 and ag.exact == pytest.approx(0.5)
    assert ag.confusion[3] == [0, 0, 6, 6] and ag.confusion[2] == [0, 0, 6, 6]
    assert ag.kappa == pytest.approx(0.0, abs=1e-12)
    assert ag.kappa_binary is None  # everyone said relevant: chance agreement is total
    # An override of the judge's d10 label adds a pair: the judge said 2, the human says 0.
    override_label(store, "q1", doc("q1", 10), 0, "ana")
    after = agreement(store)
    assert after.pairs == 25 and after.lenient == 1 and after.lenient_rate == pytest.approx(1.0)
    # A newer judge answer replaces the older one of the same judge.
    write_judgments(store, [Judgment("q1", doc("q1", 10), 0, "judge", JUDGE)])
    assert agreement(store).lenient == 0
    assert agreement(store, labeller="another-judge").pairs == 0
