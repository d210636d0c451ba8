"""The judged@k gate: one rule, on the exact fraction, for every command and dashboard page.

A run under the gate (default 0.9) counts too many unlabelled docs as non-relevant for its
scores to be compared. The rule, `passes`, is the only place the decision is made:

- judged@k is the mean over the evaluation set's queries of (labelled docs in the run's top
  min(k, returned)) / min(k, returned), a query the run returned nothing for counting 0 (the
  ir-measures Judged@k of DESIGN.md). It is computed from integer counts as an exact
  `fractions.Fraction` (`pooling.pool.exact_judged`), never from floats;
- the gate is the decimal number as written (`gate=0.9` is exactly 9/10, not the binary
  float nearest to it);
- a run passes when judged@k >= gate, compared exactly: no epsilon, no rounding. A run at
  exactly 9/10 passes, whatever its float mean prints; one at 0.8998 is refused.

Every judged@k shown next to the gate goes through `fmt_judged`: three decimals, or as many more
as it takes for the printed number to fall on the same side of the gate as the exact value, so
a run under 0.9 never reads as 0.900. The refusal names each run under the gate, its judged@k,
holes and queries it returned nothing for, and the `judge` call that fills the holes, as data
(`errors.Call`: the CLI prints it as the `judgepool judge ...` line) — only for runs that have
holes: a run under the gate with none misses queries, which no judge can fix.

This module stays light (no numpy) because `judgepool pool` imports `judge_command` at startup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from judgepool.defaults import GATE
from judgepool.errors import (
    Call,
    GateRefusedError,
    Param,
    Placeholder,
    Remedy,
    UsageError,
    counted,
    join,
    remedy,
)
from judgepool.pooling.store.connection import Store

MODEL = Placeholder("MODEL")  # the judge's model, for the user to choose
_MAX_DIGITS = 17  # past this a float cannot tell them apart: show the fraction itself


def judge_command(
    store: Store,
    depth: int,
    runs: Sequence[str],
    level: str,
    all_queries: bool = False,
    labeller: str | None = None,
) -> Call:
    """The exact `judge` call that fills these holes, as data: the CLI prints it as the
    `judgepool judge ...` line to copy, a library user reads `db.judge(...)`.

    `labeller` is the judge whose labels count: the holes are the same ones only if the judge
    call counts the same labels.
    """
    call = Call.of(
        "judge",
        depth=depth,
        level=None if level == "chunk" else level,
        runs=tuple(runs) or None,
        all_queries=all_queries,
        labeller=labeller,
    )
    return call.on(store.path)


def fill_command(
    store: Store, depth: int, runs: Sequence[str], level: str, labeller: str | None = None
) -> Call:
    """`judge_command` with the model left to choose, as `judgepool pool` prints it."""
    call = judge_command(store, depth, runs, level, labeller=labeller)
    return Call(call.verb, call.args, (*call.params, ("model", MODEL)), call.db)


def check_gate(threshold: float) -> float:
    """A gate is a share of judged docs."""
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(
            f"gate {threshold} is not between 0 and 1",
            remedy("use e.g. {}", Param("gate", GATE)),
            value=threshold,
        )
    return threshold


def gate_value(threshold: float | Fraction) -> Fraction:
    """The gate as the exact decimal it was written as (0.9 -> 9/10)."""
    if isinstance(threshold, Fraction):
        return threshold
    return Fraction(repr(float(check_gate(threshold))))


def passes(judged: Fraction, threshold: float | Fraction = GATE) -> bool:
    """THE gate rule: judged@k (exact) at or above the gate (exact). Used by every caller."""
    return judged >= gate_value(threshold)


def fmt_judged(judged: Fraction, threshold: float | Fraction = GATE, digits: int = 3) -> str:
    """judged@k for people: `digits` decimals, more when fewer would put it on the wrong side
    of the gate (0.8998 is shown as 0.8998, never 0.900; 0.9 exactly as 0.900)."""
    side = passes(judged, threshold)
    for places in range(digits, _MAX_DIGITS + 1):
        text = f"{float(judged):.{places}f}"
        if passes(Fraction(text), threshold) == side:
            return text
    return f"{judged.numerator}/{judged.denominator}"


@dataclass(frozen=True)
class RefusedRun:
    """A run under the gate: its exact judged@k, the holes in its top k, and the evaluation-set
    queries it returned nothing for (out of `queries`)."""

    run: str
    judged: Fraction
    holes: int
    missing: int = 0
    queries: int = 0


def under_gate(
    runs: Sequence[str],
    judged: Mapping[str, Fraction],
    holes: Mapping[str, int],
    threshold: float | Fraction,
    missing: Mapping[str, int] | None = None,
    queries: int = 0,
) -> tuple[RefusedRun, ...]:
    """The runs (in the given order, once each) that do not pass the gate."""
    return tuple(
        RefusedRun(run, judged[run], holes[run], (missing or {}).get(run, 0), queries)
        for run in dict.fromkeys(runs)
        if not passes(judged[run], threshold)
    )


def describe(r: RefusedRun, k: int, threshold: float | Fraction) -> str:
    """`dense-v2: judged@10 0.831, 122 holes` (+ the queries it misses, when it misses some)."""
    text = f"{r.run}: judged@{k} {fmt_judged(r.judged, threshold)}, {r.holes} hole"
    text += "" if r.holes == 1 else "s"
    if r.missing:
        text += f", nothing returned for {r.missing} of {r.queries} queries"
    return text


def refusal(
    refused: Sequence[RefusedRun], k: int, threshold: float, command: Call | None
) -> GateRefusedError:
    """The error a refused comparison raises (the CLI's exit code 3): who is under the gate,
    and the fix."""
    listing = "; ".join(describe(r, k, threshold) for r in refused)
    fixes: list[str | Remedy] = []
    if command is not None:
        fixes.append(
            remedy(
                "fill the holes with: {} (MODEL: a litellm model such as openai/gpt-4o-mini, "
                "or offline for the local judge)",
                command,
            )
        )
    astray = [r.run for r in refused if r.missing and (not r.holes or 2 * r.missing > r.queries)]
    if astray:
        fixes.append(
            f"{', '.join(astray)}: no judge can fill a query a run returned nothing for; check "
            "that the run names queries as the labels do ("
            + remedy("`{}`", Call.of("evaluate"))
            + " shows examples of both) and ingest it again"
        )
    fixes.append(remedy("or pass {} to compare anyway (marked UNRELIABLE)", Param("force")))
    return GateRefusedError(
        f"comparison refused: {counted(len(refused), 'run')} under the judged@{k} gate of "
        f"{threshold:g} ({listing})",
        join(fixes),
        value=tuple(r.run for r in refused),
    )
