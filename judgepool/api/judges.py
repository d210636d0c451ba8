"""The judges verbs: the ranking of runs under each judge (does the verdict depend on who
filled the holes? metrics/by_judge.py) and how much judges agree (metrics/judges.py)."""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.api.store import Store
from judgepool.defaults import GATE, LEVEL, RESAMPLES, SEED, K, Level
from judgepool.errors import Param, UsageError, remedy
from judgepool.metrics import by_judge
from judgepool.metrics.agreement import Agreement
from judgepool.metrics.by_judge import RankingsByJudge
from judgepool.metrics.judges import JudgesAgreement
from judgepool.metrics.measures import Measure

__all__ = [
    "Agreement",
    "JudgesAgreement",
    "RankingsByJudge",
    "human_agreement",
    "judges_agreement",
    "rank_by_judge",
]


def rank_by_judge(
    store: Store,
    runs: Sequence[str] | None = None,
    *,
    judges: Sequence[str] | None = None,
    level: Level = LEVEL,
    k: int = K,
    measure: str | Measure | None = None,
    baseline: str | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    gate: float = GATE,
) -> RankingsByJudge:
    """Rank `runs` (default: all; with a `baseline`, it is one of them) under each of `judges`
    (labellers; default: every judge at `level`) by `measure` (default nDCG@k), with Kendall's
    tau between the judges' rankings and, with a `baseline`, each run's paired difference from
    it under each judge."""
    chosen = list(runs or ())
    if baseline is not None and chosen and baseline not in chosen:
        chosen.insert(0, baseline)
    return by_judge.rank_by_judge(
        store,
        chosen or None,
        list(judges) if judges else None,
        level=level,
        k=k,
        measure=measure,
        baseline=baseline,
        resamples=resamples,
        seed=seed,
        gate=gate,
    )


def judges_agreement(
    store: Store, *, level: Level = LEVEL, judges: Sequence[str] | None = None
) -> JudgesAgreement:
    """Cohen's kappa for every two of `judges` (default: every judge at `level`), Krippendorff's
    alpha over all, and the confusion matrices, on the pairs both labelled."""
    from judgepool.metrics.judges import judges_agreement as agreement

    names = list(judges or ()) or by_judge.judge_labellers(store, level)
    if len(names) < 2:
        raise UsageError(
            f"{len(names)} judge(s) at the {level} level: agreement needs two",
            remedy("label with another judge first, or name two with {}", Param("judges", None)),
        )
    return agreement(store, level, names)


def human_agreement(
    store: Store, *, level: Level = LEVEL, labeller: str | None = None
) -> Agreement:
    """How a judge (`labeller`, else any judge) agrees with people at `level`, on the pairs both
    labelled: kappas, leniency, the confusion matrix (metrics/agreement.py)."""
    from judgepool.metrics.agreement import agreement

    return agreement(store, level, labeller)
