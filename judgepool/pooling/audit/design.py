"""The weighted audit design: queries drawn with probability rising with the judge's uncertainty
about them (active inference, Zrnic & Candes 2024), each audited query later weighted by the
inverse of its inclusion probability (metrics/ppi_ratio.py).

The draw is sequential Poisson sampling (Ohlsson, 1998): every query gets a seeded uniform U_i
and the key U_i / s_i, s_i its size measure, and the sample of n is the n smallest keys. So the
sample has exactly n queries, a larger n with the same seed extends it (the order does not depend
on n), and with equal sizes it is a uniform draw. Its inclusion probabilities are close to, but
not exactly, n s_i / sum(s); `inclusion_probabilities` computes them by simulating the draw
`DRAWS` times (seeded, so a draw records the same probabilities every time), which is exact to
about 0.5 % of each probability.

The size measure mixes the uncertainty score (metrics/audit_design.py) with a uniform floor:
s_i = MIX * mean(score) + (1 - MIX) * score_i, so no query is left with a tiny probability and a
huge weight should the uncertainty model be wrong. A query scored 0 (no judge label among its
labels) is not drawn at all: its figures are known without an audit, and it counts as audited
with probability 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

#: The uniform share of the weighted design's size measure.
MIX = 0.25
#: Simulated draws behind the recorded inclusion probabilities.
DRAWS = 20_000
_CHUNK = 2_000_000  # uniforms per simulated batch (memory)


def sizes(scores: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    """The size measure of each query (module docstring); 0 for a query scored 0."""
    s = np.asarray(scores, dtype=np.float64)
    out = np.zeros(s.size)
    live = s > 0.0
    if live.any():
        out[live] = MIX * float(s[live].mean()) + (1.0 - MIX) * s[live]
    return out


def _uniforms(seed: int, count: int) -> NDArray[np.float64]:
    found: NDArray[np.float64] = np.random.default_rng([seed, 0]).random(count)
    return found


def weighted_order(
    qids: Sequence[str], scores: Sequence[float] | NDArray[np.float64], seed: int
) -> list[str]:
    """The queries scored above 0 (taken in qid order) by increasing key U_i / s_i."""
    order = sorted(range(len(qids)), key=lambda i: qids[i])
    s = sizes(np.asarray(scores, dtype=np.float64)[order])
    u = _uniforms(seed, len(order))
    live = np.flatnonzero(s > 0.0)
    keys = u[live] / s[live]
    ranked = live[np.argsort(keys, kind="stable")]
    return [qids[order[i]] for i in ranked]


def inclusion_probabilities(
    scores: Sequence[float] | NDArray[np.float64], n: int, seed: int, draws: int = DRAWS
) -> NDArray[np.float64]:
    """Each query's probability of being among the n smallest keys (0 for a query scored 0),
    by `draws` seeded simulations of the draw; n at least the live queries gives 1 to each."""
    s = sizes(scores)
    live = np.flatnonzero(s > 0.0)
    out = np.zeros(s.size)
    if n >= live.size:
        out[live] = 1.0
        return out
    if n <= 0:
        return out
    rng = np.random.default_rng([seed, 1])
    hits = np.zeros(live.size)
    rows = max(1, _CHUNK // live.size)
    done = 0
    while done < draws:
        m = min(rows, draws - done)
        keys = rng.random((m, live.size)) / s[live][None, :]
        chosen = np.argpartition(keys, n - 1, axis=1)[:, :n]
        hits += np.bincount(chosen.ravel(), minlength=live.size)
        done += m
    # A query in every simulated sample still has a probability below 1 in principle; keep
    # every recorded probability in (0, 1] and away from 0 (a never-seen query is possible).
    out[live] = np.clip(hits / draws, 1.0 / (2.0 * draws), 1.0)
    return out
