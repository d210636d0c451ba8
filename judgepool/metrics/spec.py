"""The options of an evaluation and of a comparison, as frozen specs checked when made.

`EvalSpec` says which labels count (level, judge), which measures at which cut-off, how the
queries are averaged and how the intervals are resampled; `CompareSpec` adds the judged@k gate,
`force` and the significance level. Every layer that computes figures (metrics/evaluate.py,
metrics/compare.py, metrics/verdicts.py) and the services of the api take one of them instead of
a dozen loose options, and every default is `judgepool.defaults`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.defaults import (
    AVERAGE,
    AVERAGES,
    GATE,
    KEY_REL,
    LEVEL,
    REL,
    RESAMPLES,
    SEED,
    Average,
    K,
    Level,
)
from judgepool.errors import Param, UsageError, join, remedy
from judgepool.metrics.gate import check_gate
from judgepool.metrics.measures import Measure, check_k, check_rel, default_measures, parse_measure
from judgepool.pooling.store.judgments import check_level

#: Holm-adjusted p-values under this are significant.
ALPHA = 0.05


def check_average(average: str) -> Average:
    """`defined` (the queries a measure is defined on) or `trec_eval` (every query, as -c)."""
    if average not in AVERAGES:
        raise UsageError(
            f"unknown way to average {average!r}",
            "use " + join([remedy("{}", Param("average", a)) for a in AVERAGES], " or "),
            value=average,
        )
    return average  # type: ignore[return-value]


def check_resamples(resamples: int) -> int:
    """Resampling needs at least one resample."""
    if resamples < 1:
        raise UsageError(
            f"resamples={resamples} is not positive",
            remedy("use e.g. {}", Param("resamples", RESAMPLES)),
            value=resamples,
        )
    return resamples


def chosen_measures(
    measures: Sequence[str | Measure] | None, k: int, rel: int, key_rel: int
) -> tuple[Measure, ...]:
    """The measures asked for (ir-measures strings or Measures), or the four defaults at k."""
    if not measures:
        return default_measures(k, rel, key_rel)
    return tuple(dict.fromkeys(m if isinstance(m, Measure) else parse_measure(m) for m in measures))


@dataclass(frozen=True, kw_only=True)
class EvalSpec:
    """How to evaluate: labels at `level` (human, and `labeller`'s judge labels, None: any
    judge's), `measures` (ir-measures strings or Measures; empty: nDCG@k, R(rel=key_rel)@k,
    nR(rel=rel)@k, Judged@k), the queries averaged (`average`), `resamples` bootstrap resamples
    and sign flips seeded with `seed`, and the grade a hole gets in the bounds (`top_grade`,
    None: the highest grade there is, at least 3)."""

    level: Level = LEVEL
    labeller: str | None = None
    k: int = K
    rel: int = REL
    key_rel: int = KEY_REL
    measures: tuple[str | Measure, ...] = ()
    resamples: int = RESAMPLES
    seed: int = SEED
    average: Average = AVERAGE
    top_grade: int | None = None

    def __post_init__(self) -> None:
        check_k(self.k)
        check_rel(self.rel)
        check_rel(self.key_rel)
        check_average(self.average)
        check_level(self.level)
        check_resamples(self.resamples)
        given: Sequence[str | Measure] | None = self.measures
        # One measure, or any sequence of them, is kept as a tuple (a spec is hashable).
        object.__setattr__(
            self,
            "measures",
            (given,) if isinstance(given, str | Measure) else tuple(given or ()),
        )

    def chosen(self) -> tuple[Measure, ...]:
        """The measures this evaluation computes, parsed (an unknown one is refused here)."""
        return chosen_measures(self.measures, self.k, self.rel, self.key_rel)


@dataclass(frozen=True, kw_only=True)
class CompareSpec(EvalSpec):
    """An evaluation of the compared runs, behind the judged@k `gate` (refused under it, unless
    `force`: then marked unreliable); differences significant when Holm's p is under `alpha`."""

    gate: float = GATE
    force: bool = False
    alpha: float = ALPHA

    def __post_init__(self) -> None:
        super().__post_init__()
        check_gate(self.gate)
