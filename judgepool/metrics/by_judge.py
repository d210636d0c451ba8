"""The ranking of runs under each judge: does the verdict depend on who filled the holes?

For each judge (a labeller of judge labels at the level; human labels always count) the runs
are evaluated with that judge's labels only, as `--judge LABELLER` does, and ranked by one
measure's mean (1 = best; runs with equal means share a rank). Every two judges' rankings are
compared by Kendall's tau-b over the runs both could score. With a baseline, each candidate's
paired difference from it, its interval and Holm verdict are given under each judge too (the
gate is not applied: a run a judge left under it is named in `under_gate`).

Judged@k under each judge is reported with the ranking: a judge that labelled only part of the
holes leaves them counted 0, which moves the ranking for want of labels, not of quality.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from judgepool.defaults import GATE, LEVEL, RESAMPLES, SEED, K, Level
from judgepool.errors import Call, Param, Placeholder, UsageError, remedy
from judgepool.metrics.compare import Delta, compare
from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.gate import passes
from judgepool.metrics.measures import Measure, parse_measure
from judgepool.metrics.spec import CompareSpec
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judge_runs import canary_checks
from judgepool.pooling.store.judgments import labellers as all_labellers
from judgepool.stats.agreement import kendall_tau


@dataclass(frozen=True)
class JudgeRanking:
    """The runs under one judge: means, ranks, judged@k, and the baseline comparisons."""

    labeller: str
    means: dict[str, float | None]
    ranks: dict[str, int | None]
    judged: dict[str, float]
    under_gate: tuple[str, ...]
    fooled: bool
    deltas: tuple[Delta, ...] = ()


@dataclass(frozen=True)
class RankingsByJudge:
    """Every judge's ranking and Kendall's tau between every two of them."""

    level: str
    k: int
    measure: str
    runs: tuple[str, ...]
    baseline: str | None
    judges: tuple[JudgeRanking, ...]
    tau: tuple[tuple[str, str, float | None], ...]

    @property
    def same_order(self) -> bool:
        """Every judge ranks the runs in the same order (ranks identical)."""
        return len({tuple(j.ranks.get(r) for r in self.runs) for j in self.judges}) <= 1

    @property
    def verdicts_agree(self) -> bool:
        """Every candidate is significant in the same direction (or not) under every judge."""
        seen: dict[str, set[int]] = {}
        for judge in self.judges:
            for d in judge.deltas:
                sign = 0 if not d.significant or d.delta is None else (1 if d.delta > 0 else -1)
                seen.setdefault(d.candidate, set()).add(sign)
        return all(len(v) == 1 for v in seen.values())


def _ranks(means: dict[str, float | None]) -> dict[str, int | None]:
    scored = {r: m for r, m in means.items() if m is not None}
    return {
        r: (1 + sum(1 for x in scored.values() if x > m) if m is not None else None)
        for r, m in means.items()
    }


def judge_labellers(store: Store, level: str) -> list[str]:
    """Every labeller of judge labels at `level`, most labels first."""
    return [name for source, name, _ in all_labellers(store, level) if source == "judge"]


def rank_by_judge(
    store: Store,
    runs: Sequence[str] | None = None,
    labellers: Sequence[str] | None = None,
    *,
    level: Level = LEVEL,
    k: int = K,
    measure: str | Measure | None = None,
    baseline: str | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    gate: float = GATE,
) -> RankingsByJudge:
    """Rank `runs` (default: all) under each of `labellers` (default: every judge at `level`)."""
    chosen = measure if isinstance(measure, Measure) else parse_measure(measure or f"nDCG@{k}")
    if chosen.kind == "Judged":
        raise UsageError(f"{chosen} measures labels, not runs", "rank by nDCG@k, nR@k, ...")
    judged_measure = Measure("Judged", k)
    names = list(dict.fromkeys(labellers or judge_labellers(store, level)))
    if len(names) < 2:
        raise UsageError(
            f"{len(names)} judge(s) labelled at the {level} level: a ranking per judge needs two",
            remedy(
                "run `{}` with another model (or several at once: {}), or name them with {}",
                Call.of("judge", Placeholder("MODEL")),
                Param("models", (Placeholder("MODEL"), Placeholder("MODEL"))),
                Param("labellers", (Placeholder("LABELLER"), Placeholder("LABELLER"))),
            ),
        )
    checks = canary_checks(store, names)
    rankings = []
    order: tuple[str, ...] = ()
    for name in names:
        # The gate is not applied (force): a run a judge left under it is named in under_gate.
        spec = CompareSpec(
            level=level,
            labeller=name,
            k=k,
            measures=(chosen, judged_measure),
            resamples=resamples,
            seed=seed,
            gate=gate,
            force=True,
        )
        deltas: tuple[Delta, ...] = ()
        if baseline is not None:
            others = [r for r in (runs or []) if r != baseline]
            if not others:
                raise UsageError(
                    remedy("{} needs other runs to compare", Param("baseline", None)),
                    remedy("add {}", Param("runs", (Placeholder("NAME"),))),
                    value=baseline,
                )
            cmp = compare(store, baseline, others, spec)
            ev, deltas = cmp.evaluation, cmp.deltas
        else:
            ev = evaluate(store, runs or None, spec)
        order = ev.runs
        means = {r: ev.summaries[r].mean[str(chosen)] for r in ev.runs}
        rankings.append(
            JudgeRanking(
                labeller=name,
                means=means,
                ranks=_ranks(means),
                judged={r: ev.summaries[r].judged for r in ev.runs},
                under_gate=tuple(
                    r for r in ev.runs if not passes(ev.summaries[r].judged_exact, gate)
                ),
                fooled=name in checks and checks[name].fooled,
                deltas=deltas,
            )
        )
    taus = []
    for a, b in combinations(rankings, 2):
        both = [r for r in order if a.means.get(r) is not None and b.means.get(r) is not None]
        tau = kendall_tau([a.means[r] or 0.0 for r in both], [b.means[r] or 0.0 for r in both])
        taus.append((a.labeller, b.labeller, None if tau != tau else tau))
    return RankingsByJudge(level, k, str(chosen), order, baseline, tuple(rankings), tuple(taus))
