"""Agreement between two labellings of the same pairs: confusion matrices and Cohen's kappa.

Pure numpy, in one place that both the judge (the offline judge calibrates its thresholds by
kappa) and metrics (judge-vs-human reports) may import, since neither may import the other.

- `confusion(a, b, categories)`: the count matrix of paired labels (rows a, columns b);
- `kappa(confusion, weights)`: (p_o - p_e) / (1 - p_e) in its weighted form, 1 - sum(w O) /
  sum(w E), which with w = 1 - I is Cohen's kappa; NaN when the expected disagreement is zero
  (both raters used one and the same category for every pair);
- `quadratic_weights(size)`: w_ij = (i - j)^2, so a 0-vs-3 disagreement costs nine 0-vs-1 ones;
- `binary_confusion(confusion, threshold)`: the 2 x 2 matrix of "below threshold" vs not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.int64]


def confusion(a: Sequence[int] | NDArray[np.int64], b: Sequence[int] | NDArray[np.int64],
              categories: int = 4) -> Matrix:  # fmt: skip
    """The `categories` x `categories` count matrix of (a, b) pairs; labels must be in range."""
    left = np.asarray(a, dtype=np.int64).ravel()
    right = np.asarray(b, dtype=np.int64).ravel()
    if left.shape != right.shape:
        raise ValueError(f"labellings differ in length: {left.shape} vs {right.shape}")
    both = np.concatenate([left, right])
    if both.size and (both.min() < 0 or both.max() >= categories):
        raise ValueError(f"a label is outside 0..{categories - 1}")
    cells = left * categories + right
    return np.bincount(cells, minlength=categories * categories).reshape(
        categories, categories
    ).astype(np.int64)


def kappa(counts: Matrix, weights: NDArray[np.float64] | None = None) -> float:
    """Cohen's kappa of a square count matrix (weighted when `weights` is given); NaN when the
    expected disagreement is zero or there is no pair."""
    observed = np.asarray(counts, dtype=np.float64)
    n = observed.sum()
    if n == 0:
        return float("nan")
    size = observed.shape[0]
    if weights is None:
        weights = 1.0 - np.eye(size)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    disagreement_expected = float((weights * expected).sum())
    if disagreement_expected == 0.0:
        return float("nan")
    return 1.0 - float((weights * observed).sum()) / disagreement_expected


def cohen_kappa(a: Sequence[int], b: Sequence[int], categories: int = 4) -> float:
    """Unweighted Cohen's kappa of two labellings with values 0..categories-1."""
    return kappa(confusion(a, b, categories))


def quadratic_weights(size: int) -> NDArray[np.float64]:
    """w_ij = (i - j)^2 (the normalisation by (size - 1)^2 cancels in the kappa ratio)."""
    idx = np.arange(size, dtype=np.float64)
    return (idx[:, None] - idx[None, :]) ** 2


def binary_confusion(counts: Matrix, threshold: int = 2) -> Matrix:
    """Collapse a grade confusion matrix (grades 0..size-1) to 2 x 2: below `threshold` vs at or
    above it."""
    matrix = np.asarray(counts)
    below = np.arange(matrix.shape[0]) < threshold
    return np.array(
        [
            [matrix[below][:, below].sum(), matrix[below][:, ~below].sum()],
            [matrix[~below][:, below].sum(), matrix[~below][:, ~below].sum()],
        ],
        dtype=np.int64,
    )


def binary(grades: Sequence[int], relevant_from: int = 2) -> list[int]:
    """Grades as relevant (1) / not (0), TREC DL's convention: relevant from grade 2."""
    return [int(g >= relevant_from) for g in grades]
