"""The judged@k gate: a comparison with a run whose top k is too little labelled is refused.

A run under the gate (default 0.9) counts too many unlabelled docs as non-relevant for its
scores to be compared; the refusal names each such run, its judged@k and holes, and the exact
`judgepool judge ...` command that fills them. judged@k here is the same number as
`pooling.pool.pool_summary`'s judged (same evaluation set, same definition).

This module stays light (no numpy) because `judgepool pool` imports `judge_command` at startup.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from judgepool.pooling.errors import GateRefusedError, UsageError
from judgepool.pooling.store import Store

DEFAULT_GATE = 0.9
# judged@k is a mean of fractions; a run exactly at the gate must not be refused for a rounding.
_SLACK = 1e-9


def judge_command(
    store: Store,
    depth: int,
    runs: Sequence[str],
    level: str,
    all_queries: bool = False,
    judge: str | None = None,
) -> str:
    """The exact `judgepool judge ...` command that fills these holes (printed for copying).

    `judge` is the labeller whose labels count (`--judge`): the holes are the same ones only if
    the judge command counts the same labels.
    """
    parts = ["judgepool", "--db", str(store.path), "judge", "--depth", str(depth)]
    if level != "chunk":
        parts += ["--level", level]
    for run in runs:
        parts += ["--run", run]
    if all_queries:
        parts.append("--all-queries")
    if judge is not None:
        parts += ["--judge", judge]
    return shlex.join(parts)


def fill_command(
    store: Store, depth: int, runs: Sequence[str], level: str, judge: str | None = None
) -> str:
    """`judge_command` with the model left to choose, as `judgepool pool` prints it."""
    return judge_command(store, depth, runs, level, judge=judge) + " --model MODEL"


def check_gate(threshold: float) -> float:
    """A gate is a share of judged docs."""
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(f"gate {threshold} is not between 0 and 1", "use e.g. --gate 0.9")
    return threshold


@dataclass(frozen=True)
class RefusedRun:
    """A run under the gate: its judged@k and the holes in its top k."""

    run: str
    judged: float
    holes: int


def under_gate(
    judged: dict[str, float], holes: dict[str, int], runs: Sequence[str], threshold: float
) -> tuple[RefusedRun, ...]:
    """The runs (in the given order) whose judged@k is under `threshold`."""
    return tuple(
        RefusedRun(run, judged[run], holes[run])
        for run in dict.fromkeys(runs)
        if judged[run] < threshold - _SLACK
    )


def refusal(
    refused: Sequence[RefusedRun], k: int, threshold: float, command: str
) -> GateRefusedError:
    """The error `judgepool compare` exits with (code 3): who is under the gate, and the fix."""
    listing = "; ".join(
        f"{r.run}: judged@{k} {r.judged:.3f}, {r.holes} hole{'s' if r.holes != 1 else ''}"
        for r in refused
    )
    return GateRefusedError(
        f"comparison refused: {len(refused)} run(s) under the judged@{k} gate of {threshold:g} "
        f"({listing})",
        f"fill the holes with: {command} (MODEL: a litellm model such as openai/gpt-4o-mini, "
        "or offline for the local judge), "
        "or pass --force to compare anyway (marked UNRELIABLE)",
    )
