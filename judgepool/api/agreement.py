"""How far a judge can be trusted, as figures: its agreement with people on the pairs both
labelled (kappas, leniency, the confusion matrix), and judges' agreement with each other
(Krippendorff's alpha, pairwise kappas). The dashboard's Audit page shows both; the figures are
metrics/agreement.py's and metrics/judges.py's.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.defaults import LEVEL, Level
from judgepool.metrics.agreement import Agreement
from judgepool.metrics.agreement import agreement as judge_vs_human
from judgepool.metrics.judges import JudgesAgreement
from judgepool.metrics.judges import judges_agreement as judge_vs_judge
from judgepool.pooling.store.connection import Store

__all__ = ["Agreement", "JudgesAgreement", "with_judges", "with_people"]


def with_people(store: Store, *, level: Level = LEVEL, labeller: str | None = None) -> Agreement:
    """The judge's (`labeller`'s, else any judge's) agreement with people at `level`."""
    return judge_vs_human(store, level, labeller)


def with_judges(store: Store, labellers: Sequence[str], *, level: Level = LEVEL) -> JudgesAgreement:
    """How the judges `labellers` agree with each other at `level`, on the pairs at least two of
    them labelled."""
    return judge_vs_judge(store, level, list(labellers))
