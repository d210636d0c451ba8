"""Intervals and tests over queries: percentile bootstrap, paired randomisation test, Holm.

- `bootstrap_means` resamples the rows (queries) of a (queries x columns) matrix with
  replacement, the same resample for every column, so the bootstrap of one column minus another
  is the **paired** bootstrap of the mean difference (queries resampled jointly).
- `percentile_interval` takes the 2.5th and 97.5th percentiles of those means (numpy's linear
  interpolation between order statistics).
- `sign_flip_pvalues` is the paired randomisation (permutation) test: under "no difference" the
  two runs' values of a query are exchangeable, so the sign of each per-query difference is a
  coin flip; the two-sided p-value is (1 + #{|mean of flipped| >= |observed mean|}) / (1 + R).
- `holm` adjusts a family of p-values for the number of comparisons (Holm-Bonferroni).

Everything is seeded: a `numpy.random.Generator` seeded with (seed, stream) draws the resamples
in fixed-size blocks, so the same seed and inputs give the same numbers on every run. Resamples
are drawn as a count matrix per block and multiplied with the data (one BLAS call), so the cost
is independent of the number of columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

_BLOCK = 500  # resamples drawn at once: bounds memory to _BLOCK x queries counts
_BOOTSTRAP, _PERMUTATION = 0, 1


def _generator(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), stream])


def bootstrap_means(values: NDArray[np.float64], resamples: int, seed: int) -> NDArray[np.float64]:
    """(resamples, columns) the column means of `resamples` joint resamples of the rows."""
    n, columns = values.shape
    out = np.empty((resamples, columns))
    if n == 0:
        out.fill(np.nan)
        return out
    rng = _generator(seed, _BOOTSTRAP)
    # int32 draws are twice as fast as int64 ones, and a block's cells fit in one when n < 4M.
    cells = np.int32 if _BLOCK * n < 2**31 else np.int64
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        picks = rng.integers(0, n, size=(size, n), dtype=cells)
        picks += (n * np.arange(size, dtype=cells))[:, None]
        counts = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = (counts.astype(np.float64) @ values) / n
    return out


def percentile_interval(
    means: NDArray[np.float64], level: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The percentile interval of bootstrap means, per column: (low, high)."""
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail], axis=0)
    return low, high


def sign_flip_pvalues(
    differences: NDArray[np.float64], resamples: int, seed: int
) -> NDArray[np.float64]:
    """(columns,) two-sided paired randomisation p-values of (queries x columns) differences."""
    n, columns = differences.shape
    if n == 0:
        return np.full(columns, np.nan)
    observed = np.abs(differences.mean(axis=0))
    # A permuted mean equal to the observed one up to rounding counts as "as extreme".
    slack = 1e-12 * np.maximum(1.0, observed)
    extreme = np.zeros(columns, dtype=np.int64)
    rng = _generator(seed, _PERMUTATION)
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        bits = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        signs = np.unpackbits(bits, axis=1, count=n).astype(np.float64) * 2.0 - 1.0
        flipped = np.abs(signs @ differences) / n
        extreme += (flipped >= observed - slack).sum(axis=0)
    pvalues: NDArray[np.float64] = (1.0 + extreme).astype(np.float64) / (1.0 + resamples)
    return pvalues


def holm(pvalues: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
