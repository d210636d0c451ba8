"""The values a measure can take: [0, 1] for shares and normalised gains, >= 0 for counts.

Why it matters: a figure outside its measure's range is a mistake, not a goal. A floor of
nDCG@10=1.5 fails every run for ever and one of -0.5 can never fail, so `set_floors` refuses both
and says the range. The table below is judgepool's reading of each measure's definition (the
native four, `metrics/measures.py`, and the ir-measures measures an installed provider computes);
a measure it does not list (or one given parameters that can move its range, such as nDCG's
custom `gains`, which may be negative) has no known range, and only finiteness is checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from judgepool.metrics.measures import Measure


@dataclass(frozen=True)
class ValueRange:
    """`low` <= value <= `high` (`high` None: no upper end, as for counts)."""

    low: float
    high: float | None

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int | float) or math.isnan(value):
            return False
        return self.low <= value and (self.high is None or value <= self.high)

    def __str__(self) -> str:
        if self.high is None:
            return f"{self.low:g} or more"
        return f"[{self.low:g}, {self.high:g}]"

    @property
    def phrase(self) -> str:
        """`in [0, 1]`, `of 0 or more`: the range after a noun ("a value in [0, 1]")."""
        return f"{'of' if self.high is None else 'in'} {self}"


UNIT = ValueRange(0.0, 1.0)
COUNT = ValueRange(0.0, None)

# Shares, probabilities and gains normalised by the ideal ranking (or by the largest possible
# gain): never below 0, never above 1.
_UNIT_KINDS = frozenset(
    {
        "nDCG",  # DCG over the ideal DCG of the same labels
        "R",  # relevant docs found / relevant docs
        "nR",  # relevant docs found in the top k / min(k, relevant docs)
        "Judged",  # labelled docs in the top k / docs in the top k
        "P",
        "AP",
        "RR",
        "Rprec",
        "Success",
        "Bpref",
        "infAP",
        "IPrec",
        "Accuracy",
        "Compat",
        "SetP",
        "SetR",
        "SetF",
        "SetAP",
        "ERR",
        "RBP",
        "SDCG",
        "StRecall",
        "P_IA",
        "AP_IA",
    }
)
# How many: queries, docs returned, relevant docs. Whole numbers from 0 up.
_COUNT_KINDS = frozenset({"NumQ", "NumRel", "NumRet", "NumRelRet"})
# Parameters that can take a measure out of its usual range (nDCG's gains may be negative).
_RANGE_MOVING = frozenset({"gains"})


def value_range(measure: Measure) -> ValueRange | None:
    """The values `measure` can take, or None when judgepool knows no range for it."""
    if any(name in _RANGE_MOVING for name, _ in measure.params):
        return None
    if measure.kind in _UNIT_KINDS:
        return UNIT
    if measure.kind in _COUNT_KINDS:
        return COUNT
    return None
