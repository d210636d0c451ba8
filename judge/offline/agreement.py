"""Cohen's kappa: agreement between two labellings beyond chance (for calibration and reports).

Kept here, small and dependency-free, because the offline judge calibrates its thresholds by
maximising it; metrics/ owns the user-facing agreement statistics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def confusion(a: Sequence[int], b: Sequence[int], categories: int) -> npt.NDArray[np.int64]:
    """The `categories` x `categories` count matrix of (a, b) pairs; values must be in range."""
    left = np.asarray(a, dtype=np.int64)
    right = np.asarray(b, dtype=np.int64)
    if left.shape != right.shape:
        raise ValueError(f"labellings differ in length: {left.shape} vs {right.shape}")
    both = np.concatenate([left.ravel(), right.ravel()])
    if both.size and (both.min() < 0 or both.max() >= categories):
        raise ValueError(f"a label is outside 0..{categories - 1}")
    counts = np.zeros((categories, categories), dtype=np.int64)
    np.add.at(counts, (left, right), 1)
    return counts


def kappa_from_confusion(counts: npt.NDArray[np.int64]) -> float:
    """Kappa of a count matrix; NaN when chance agreement is total (one category only)."""
    total = float(counts.sum())
    if total == 0:
        return float("nan")
    observed = float(np.trace(counts)) / total
    expected = float((counts.sum(axis=0) * counts.sum(axis=1)).sum()) / (total * total)
    if expected >= 1.0:
        return float("nan")
    return (observed - expected) / (1.0 - expected)


def cohen_kappa(a: Sequence[int], b: Sequence[int], categories: int = 4) -> float:
    """Unweighted Cohen's kappa of two labellings with values 0..categories-1."""
    return kappa_from_confusion(confusion(a, b, categories))


def binary(grades: Sequence[int], relevant_from: int = 2) -> list[int]:
    """Grades as relevant (1) / not (0), TREC DL's convention: relevant from grade 2."""
    return [int(g >= relevant_from) for g in grades]
