"""`compare`: candidates against a baseline, paired over queries, behind the judged@k gate.

For each candidate and each effectiveness measure (nDCG, R, nR; Judged@k is the gate's input, not
a quality to test) the report gives the mean difference candidate - baseline over the queries the
measure averages (the same queries for both runs), its paired bootstrap 95% interval (queries
resampled jointly, the resamples of `evaluate`), the paired randomisation p-value, and the Holm
adjusted p-value over every candidate x measure comparison of the call; `significant` means the
Holm p-value is under `alpha` (0.05).

If any compared run is under the gate, the comparison is refused: `ComparisonFigures.refused` names
the runs and no difference is computed, unless `force=True`, in which case every difference
involving a refused run is computed and marked unreliable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from judgepool.errors import Call, GateRefusedError, UsageError
from judgepool.metrics.bootstrap import holm, percentile_interval, sign_flip_pvalues
from judgepool.metrics.evaluate import EvaluationFigures, Interval, evaluate, mask_groups
from judgepool.metrics.gate import RefusedRun, fill_command, refusal, under_gate
from judgepool.metrics.spec import ALPHA, CompareSpec
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from judgepool.metrics.corrected import Trust


@dataclass(frozen=True)
class Delta:
    """One paired comparison: candidate - baseline on one measure."""

    baseline: str
    candidate: str
    measure: str
    n: int
    delta: float | None
    ci95: Interval | None
    p: float | None
    p_holm: float | None
    significant: bool
    unreliable: bool


@dataclass(frozen=True)
class ComparisonFigures:
    """The evaluation of all compared runs, the differences, and the gate's verdict."""

    evaluation: EvaluationFigures
    baseline: str
    candidates: tuple[str, ...]
    gate: float
    force: bool
    alpha: float
    refused: tuple[RefusedRun, ...]
    deltas: tuple[Delta, ...]
    command: Call | None  # the judge call that fills the holes of the runs under the gate
    corrected: Trust | None = None  # judge-corrected figures (metrics.corrected), judge labels only

    @property
    def unreliable(self) -> bool:
        """Forced past the gate: some shown difference involves a run under it."""
        return self.force and bool(self.refused)

    def error(self) -> GateRefusedError | None:
        """The refusal (exit code 3) when the gate refused and nothing was forced."""
        if not self.refused or self.force:
            return None
        return refusal(self.refused, self.evaluation.k, self.gate, self.command)


def compared_measures(evaluation: EvaluationFigures) -> list[str]:
    """The measures differences are tested on: all but Judged@k."""
    return [str(m) for m in evaluation.measures if m.kind != "Judged"]


def paired_deltas(
    evaluation: EvaluationFigures,
    baseline: str,
    candidates: Sequence[str],
    unreliable_runs: Sequence[str] = (),
    alpha: float = ALPHA,
) -> tuple[Delta, ...]:
    """Every candidate x measure difference from the baseline, Holm-adjusted together."""
    base = evaluation.run_index(baseline)
    cand = [evaluation.run_index(c) for c in candidates]
    rows: list[dict[str, Any]] = []
    width = len(cand)
    for names in mask_groups(evaluation.averaged, compared_measures(evaluation)):
        mask = evaluation.averaged[names[0]]
        if not mask.any():  # no query to average: nothing to test on these measures
            rows += [
                {"candidate": c, "measure": m, "n": 0, "delta": None, "ci95": None, "p": None}
                for m in names
                for c in candidates
            ]
            continue
        # (queries, measures x candidates): every test of the group shares one set of sign flips.
        diffs = np.concatenate(
            [
                (evaluation.values[m][cand][:, mask] - evaluation.values[m][base][mask]).T
                for m in names
            ],
            axis=1,
        )
        p = sign_flip_pvalues(diffs, evaluation.resamples, evaluation.seed)
        for i, name in enumerate(names):
            boot = evaluation.boot[name]
            low, high = percentile_interval(boot[:, cand] - boot[:, [base]])
            rows += [
                {
                    "candidate": candidate,
                    "measure": name,
                    "n": int(mask.sum()),
                    "delta": float(diffs[:, i * width + j].mean()),
                    "ci95": (float(low[j]), float(high[j])),
                    "p": float(p[i * width + j]),
                }
                for j, candidate in enumerate(candidates)
            ]
    order = {name: i for i, name in enumerate(compared_measures(evaluation))}
    rows.sort(key=lambda r: (candidates.index(r["candidate"]), order[r["measure"]]))
    tested_rows = [r for r in rows if r["p"] is not None]
    for row, adjusted in zip(tested_rows, holm([r["p"] for r in tested_rows]), strict=True):
        row["p_holm"] = float(adjusted)
    flagged = set(unreliable_runs)
    return tuple(
        Delta(
            baseline=baseline,
            candidate=r["candidate"],
            measure=r["measure"],
            n=r["n"],
            delta=r["delta"],
            ci95=r["ci95"],
            p=r["p"],
            p_holm=r.get("p_holm"),
            significant=r.get("p_holm") is not None and r["p_holm"] < alpha,
            unreliable=baseline in flagged or r["candidate"] in flagged,
        )
        for r in rows
    )


def compare(
    store: Store, baseline: str, candidates: Sequence[str], spec: CompareSpec | None = None
) -> ComparisonFigures:
    """Compare each candidate with the baseline as `spec` says (metrics/spec.py); refused (no
    deltas) if a run is under the gate."""
    spec = spec or CompareSpec()
    gate, force, alpha = spec.gate, spec.force, spec.alpha
    candidates = tuple(dict.fromkeys(candidates))
    if not candidates:
        raise UsageError("no candidate to compare", "give at least one CANDIDATE run")
    if baseline in candidates:
        raise UsageError(
            f"run {baseline!r} is both the baseline and a candidate",
            "name it once: as the BASELINE or among the CANDIDATE runs",
        )
    runs = (baseline, *candidates)
    evaluation = evaluate(store, runs, spec)
    summaries = evaluation.summaries
    refused = under_gate(
        runs,
        {r: summaries[r].judged_exact for r in runs},
        {r: summaries[r].holes for r in runs},
        gate,
        missing={r: summaries[r].missing for r in runs},
        queries=len(evaluation.qids),
    )
    holey = [r.run for r in refused if r.holes]
    command = fill_command(store, spec.k, holey, spec.level, spec.labeller) if holey else None
    deltas: tuple[Delta, ...] = ()
    if force or not refused:
        deltas = paired_deltas(evaluation, baseline, candidates, [r.run for r in refused], alpha)
    from judgepool.metrics.corrected import with_deltas

    trust = evaluation.corrected
    corrected = with_deltas(store, trust, evaluation, baseline, deltas) if trust else None
    return ComparisonFigures(
        evaluation=evaluation,
        baseline=baseline,
        candidates=candidates,
        gate=gate,
        force=force,
        alpha=alpha,
        refused=refused,
        deltas=deltas,
        command=command,
        corrected=corrected,
    )
