"""The offline judge's arithmetic: kappa against scikit-learn, the threshold search against a
plain search, and calibration on synthetic evidence where the right answer is known."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgepool.judge.offline.method import (
    DEFAULT_THRESHOLDS,
    QUANTILES,
    Calibration,
    QueryEvidence,
    calibrate,
    decide,
    fit_thresholds,
    nearest,
    query_grade,
)
from judgepool.stats.agreement import binary, cohen_kappa

grades = st.lists(st.integers(0, 3), min_size=2, max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kappa_matches_scikit_learn(data: st.DataObject) -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    a = data.draw(grades)
    b = data.draw(st.lists(st.integers(0, 3), min_size=len(a), max_size=len(a)))
    if len(set(a) | set(b)) < 2:
        assert math.isnan(cohen_kappa(a, b))
        return
    assert cohen_kappa(a, b) == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_edges() -> None:
    assert cohen_kappa([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert cohen_kappa(binary([0, 1, 2, 3]), binary([1, 1, 3, 2]), 2) == 1.0
    with pytest.raises(ValueError, match="outside"):
        cohen_kappa([0, 4], [0, 1])


def _plain_search(s: np.ndarray, y: np.ndarray) -> float:
    cuts = [*np.unique(np.quantile(s, np.linspace(0, 1, QUANTILES))), np.inf]
    best = -np.inf
    for t in itertools.combinations_with_replacement(cuts, 3):
        predicted = (s[:, None] >= np.array(t)[None, :]).sum(axis=1)
        k = cohen_kappa(y.tolist(), predicted.tolist())
        if not math.isnan(k):
            best = max(best, k)
    return float(best)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 25))
def test_threshold_search_finds_the_best_triple(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    y[:2] = [0, 3]
    s = np.round(y * 0.1 + rng.normal(0, 0.12, n), 3)
    thresholds, kappa = fit_thresholds(s, y)
    assert thresholds[0] <= thresholds[1] <= thresholds[2]
    assert kappa == pytest.approx(_plain_search(s, y), abs=1e-12)
    achieved = cohen_kappa(y.tolist(), [query_grade(float(v), thresholds) for v in s])
    assert achieved == pytest.approx(kappa, abs=1e-12)


def test_separable_similarities_give_perfect_thresholds() -> None:
    y = np.repeat(np.arange(4), 10)
    thresholds, kappa = fit_thresholds(0.2 + 0.1 * y + np.linspace(0, 0.05, 40), y)
    assert kappa == 1.0
    assert [query_grade(0.2 + 0.1 * g + 0.01, thresholds) for g in range(4)] == [0, 1, 2, 3]


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _evidence(
    rng: np.random.Generator,
    queries: int,
    per_query: int,
    dim: int = 32,
    grade_follows_neighbours: bool = True,
    query_noise: float = 0.0,
) -> list[QueryEvidence]:
    """Synthetic queries: grade g passages sit at cos 0.2 + 0.2 g (+ noise) from the query;
    with `grade_follows_neighbours`, passages of one grade also cluster together, else each
    passage points its own random way (neighbours then say nothing about grades)."""
    out = []
    for _ in range(queries):
        query = np.zeros(dim, dtype=np.float32)
        query[0] = 1.0
        y = rng.integers(0, 4, per_query)
        centres = _unit(rng.normal(size=(4, dim - 1)))
        rows = []
        for g in y:
            direction = (
                centres[g] if grade_follows_neighbours else _unit(rng.normal(size=(1, dim - 1)))[0]
            )
            noise = rng.normal(0, 0.05, dim - 1)
            cos = float(np.clip(0.2 + 0.2 * g + rng.normal(0, query_noise), 0.05, 0.95))
            rows.append(
                np.concatenate(
                    [[cos], math.sqrt(1 - cos**2) * _unit((direction + noise)[None, :])[0]]
                )
            )
        out.append(
            QueryEvidence(
                query,
                tuple(f"d{i}" for i in range(per_query)),
                y.astype(np.int64),
                np.array(rows, dtype=np.float32),
            )
        )
    return out


def test_calibration_keeps_neighbours_when_they_agree() -> None:
    calibration = calibrate(_evidence(np.random.default_rng(1), 8, 12, query_noise=0.3))
    assert calibration.fitted and calibration.pairs == 96 and calibration.neighbours_on
    assert calibration.kappa_neighbour_rule is not None and calibration.kappa_neighbour_rule > 0.9


def test_calibration_turns_neighbours_off_when_they_say_nothing() -> None:
    evidence = _evidence(np.random.default_rng(2), 8, 12, grade_follows_neighbours=False)
    calibration = calibrate(evidence)
    assert calibration.kappa_query_rule is not None and calibration.kappa_query_rule > 0.9
    assert not calibration.neighbours_on


def test_too_few_labels_fall_back_to_the_documented_defaults() -> None:
    calibration = calibrate(_evidence(np.random.default_rng(3), 2, 10))
    assert not calibration.fitted and calibration.thresholds == DEFAULT_THRESHOLDS
    assert calibration.as_dict()["thresholds_from"] == "defaults"
    assert calibrate([]).thresholds == DEFAULT_THRESHOLDS


def test_rules_in_order() -> None:
    on = Calibration((0.3, 0.5, 0.7), True, 100, 0.3, 0.5, True)
    off = Calibration((0.3, 0.5, 0.7), True, 100, 0.5, 0.3, False)
    grades_ = np.array([1, 3, 0], dtype=np.int64)
    near = np.array([0.2, 0.96, 0.1])
    assert decide(0.1, near, grades_, off).rule == "near_duplicate"  # always on
    assert decide(0.1, near, grades_, off).grade == 3
    mid = np.array([0.45, 0.2, 0.1])
    assert (decide(0.6, mid, grades_, on).rule, decide(0.6, mid, grades_, on).grade) == (
        "neighbour",
        1,
    )
    assert (decide(0.6, mid, grades_, off).rule, decide(0.6, mid, grades_, off).grade) == (
        "query_similarity",
        2,
    )
    far = np.array([0.3, 0.2, 0.1])
    assert decide(0.75, far, grades_, on).grade == 3  # nothing near: query similarity
    assert decide(0.75, np.zeros(0), np.zeros(0, dtype=np.int64), on).neighbour is None


def test_exact_ties_share_their_grade() -> None:
    assert nearest(np.array([0.9, 0.9, 0.2]), np.array([3, 2, 0], dtype=np.int64))[2] == 3
    assert nearest(np.array([0.9, 0.9, 0.9]), np.array([0, 1, 1], dtype=np.int64))[2] == 1
