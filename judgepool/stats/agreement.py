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
- `krippendorff_alpha(coincidence, metric)`: Krippendorff's alpha (nominal, ordinal, interval)
  from a coincidence matrix (`coincidences` makes it from two labellers' count matrix, which may
  hold re-weighted counts), and `alpha_of_units` from reliability data with missing values.
- `kendall_tau(x, y)`: tau-b, for the ranking of runs under two judges (issue 16).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.int64]


def confusion(
    a: Sequence[int] | NDArray[np.int64], b: Sequence[int] | NDArray[np.int64], categories: int = 4
) -> Matrix:
    """The `categories` x `categories` count matrix of (a, b) pairs; labels must be in range."""
    left = np.asarray(a, dtype=np.int64).ravel()
    right = np.asarray(b, dtype=np.int64).ravel()
    if left.shape != right.shape:
        raise ValueError(f"labellings differ in length: {left.shape} vs {right.shape}")
    both = np.concatenate([left, right])
    if both.size and (both.min() < 0 or both.max() >= categories):
        raise ValueError(f"a label is outside 0..{categories - 1}")
    cells = left * categories + right
    return (
        np.bincount(cells, minlength=categories * categories)
        .reshape(categories, categories)
        .astype(np.int64)
    )


def kappa(
    counts: Matrix | NDArray[np.float64], weights: NDArray[np.float64] | None = None
) -> float:
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


#: The distance metrics of Krippendorff's alpha offered here.
ALPHA_METRICS: tuple[str, ...] = ("nominal", "ordinal", "interval")


def coincidences(counts: NDArray[np.float64] | Matrix) -> NDArray[np.float64]:
    """The coincidence matrix of two labellers who both labelled every unit, from their count
    matrix: each unit's two values are one pairable pair each way, o = C + C^T."""
    matrix = np.asarray(counts, dtype=np.float64)
    return matrix + matrix.T


def _distances(totals: NDArray[np.float64], metric: str) -> NDArray[np.float64]:
    """delta^2(c, k) for categories 0..K-1 with value totals `totals` (n_c)."""
    size = totals.size
    idx = np.arange(size, dtype=np.float64)
    if metric == "nominal":
        return 1.0 - np.eye(size)
    if metric == "interval":
        return (idx[:, None] - idx[None, :]) ** 2
    if metric != "ordinal":
        raise ValueError(f"unknown metric {metric!r}: use one of {ALPHA_METRICS}")
    # Ordinal: (sum of n_g for g from c to k, minus half of n_c and n_k)^2: the distance is the
    # number of values ranked between c and k, so rarely used grades lie close together.
    cumulative = np.concatenate([[0.0], np.cumsum(totals)])
    low = np.minimum.outer(np.arange(size), np.arange(size))
    high = np.maximum.outer(np.arange(size), np.arange(size))
    between = cumulative[high + 1] - cumulative[low]
    result: NDArray[np.float64] = (between - (totals[:, None] + totals[None, :]) / 2.0) ** 2
    return result


def krippendorff_alpha(coincidence: NDArray[np.float64] | Matrix, metric: str = "ordinal") -> float:
    """Krippendorff's alpha from a coincidence matrix (categories 0..K-1 in order):
    1 - (n - 1) sum(o_ck d_ck) / sum(n_c n_k d_ck), n the pairable values; NaN when the
    expected disagreement is zero (one category only) or fewer than 2 values."""
    o = np.asarray(coincidence, dtype=np.float64)
    totals = o.sum(axis=1)
    n = float(totals.sum())
    if n < 2:
        return float("nan")
    delta = _distances(totals, metric)
    expected = float((np.outer(totals, totals) * delta).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * float((o * delta).sum()) / expected


def alpha_of_units(
    data: NDArray[np.float64] | Sequence[Sequence[float | None]],
    categories: int | None = None,
    metric: str = "ordinal",
) -> float:
    """Krippendorff's alpha of reliability data: rows = labellers, columns = units, NaN or None
    = no value; values are the integers 0..categories-1 (default: up to the largest present).
    Units with fewer than two values are not pairable and are left out."""
    values = (
        np.array(
            [[np.nan if v is None else float(v) for v in row] for row in data], dtype=np.float64
        )
        if not isinstance(data, np.ndarray)
        else np.asarray(data, dtype=np.float64)
    )
    if values.ndim != 2:
        raise ValueError("reliability data must be a labellers x units table")
    present_all = values[~np.isnan(values)]
    if present_all.size == 0:
        return float("nan")
    if categories is None:
        categories = int(present_all.max()) + 1
    o = np.zeros((categories, categories))
    for unit in values.T:
        present = unit[~np.isnan(unit)].astype(np.int64)
        m = present.size
        if m < 2:
            continue
        counts = np.bincount(present, minlength=categories).astype(np.float64)
        # Every ordered pair of the unit's values (each value with each other one), / (m - 1).
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    return krippendorff_alpha(o, metric)


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
