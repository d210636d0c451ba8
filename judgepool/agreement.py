"""Agreement between labellings of the same pairs: confusion matrices, Cohen's kappa,
Krippendorff's alpha (any number of raters), and Kendall's tau between two orderings.

Pure numpy, in one place that both the judge (the offline judge calibrates its thresholds by
kappa) and metrics (judge-vs-human reports) may import, since neither may import the other.

- `confusion(a, b, categories)`: the count matrix of paired labels (rows a, columns b);
- `kappa(confusion, weights)`: (p_o - p_e) / (1 - p_e) in its weighted form, 1 - sum(w O) /
  sum(w E), which with w = 1 - I is Cohen's kappa; NaN when the expected disagreement is zero
  (both raters used one and the same category for every pair);
- `quadratic_weights(size)`: w_ij = (i - j)^2, so a 0-vs-3 disagreement costs nine 0-vs-1 ones;
- `binary_confusion(confusion, threshold)`: the 2 x 2 matrix of "below threshold" vs not;
- `krippendorff_alpha(ratings, level)`: coders x units, missing ratings allowed (judges vs
  judges, issue 16; checked against the `krippendorff` package in tests);
- `kendall_tau(x, y)`: tau-b, for the ranking of runs under two judges.
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


def _difference(level: str, values: NDArray[np.float64], totals: NDArray[np.float64]
                ) -> NDArray[np.float64]:  # fmt: skip
    """Krippendorff's squared difference delta^2 between every two values (sorted ascending)."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        # (sum of the marginals from c to k) - (n_c + n_k) / 2, squared.
        cum = np.concatenate([[0.0], np.cumsum(totals)])
        low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
        high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
        between = cum[high + 1] - cum[low]
        squared: NDArray[np.float64] = (between - (totals[:, None] + totals[None, :]) / 2.0) ** 2
        return squared
    raise ValueError(f"unknown level of measurement {level!r}: nominal, ordinal or interval")


def krippendorff_alpha(ratings: Sequence[Sequence[float | None]] | NDArray[np.float64],
                       level: str = "ordinal") -> float:  # fmt: skip
    """Krippendorff's alpha of a coders x units table (None or NaN: that coder did not rate
    that unit), at the `nominal`, `ordinal` or `interval` level of measurement.

    alpha = 1 - D_o / D_e from the coincidence matrix o_ck = sum over units of
    (n_uc n_uk - [c = k] n_uc) / (m_u - 1), with only units rated at least twice (Krippendorff,
    "Computing Krippendorff's Alpha-Reliability", 2011). NaN when there is no such unit or the
    expected disagreement is zero (every rating the same value).
    """
    table = np.array(
        [[np.nan if v is None else float(v) for v in row] for row in ratings], dtype=np.float64
    ) if not isinstance(ratings, np.ndarray) else np.asarray(ratings, dtype=np.float64)  # fmt: skip
    if table.ndim != 2:
        raise ValueError("ratings must be a coders x units table")
    values = np.unique(table[~np.isnan(table)])
    if values.size == 0:
        return float("nan")
    counts = np.stack([(table == v).sum(axis=0) for v in values], axis=1).astype(np.float64)
    pairable = counts.sum(axis=1)
    counts = counts[pairable >= 2]
    if counts.shape[0] == 0:
        return float("nan")
    weights = counts / (counts.sum(axis=1) - 1.0)[:, None]
    coincidence = weights.T @ counts - np.diag(weights.sum(axis=0))
    totals = coincidence.sum(axis=0)
    n = totals.sum()
    delta = _difference(level, values, totals)
    expected = float((np.outer(totals, totals) * delta).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - (float(n) - 1.0) * float((coincidence * delta).sum()) / expected


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two orderings of the same items (ties count in neither pair count);
    NaN when either side is constant or there are fewer than two items."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"orderings differ in length: {a.shape} vs {b.shape}")
    if a.size < 2:
        return float("nan")
    upper = np.triu(np.ones((a.size, a.size), dtype=bool), k=1)
    da = np.sign(a[:, None] - a[None, :])[upper]
    db = np.sign(b[:, None] - b[None, :])[upper]
    pairs = float(upper.sum())
    untied_a = pairs - float((da == 0).sum())
    untied_b = pairs - float((db == 0).sum())
    if untied_a == 0 or untied_b == 0:
        return float("nan")
    return float((da * db).sum()) / float(np.sqrt(untied_a * untied_b))
