"""The floors verbs: set floors under measures' means (from values or a run's current mean), list
them, and check a run against them (metrics/floors.py; stored in pooling/store/floors.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgepool.api.ci_results import FloorCheck
from judgepool.api.store import Store
from judgepool.defaults import GATE, LEVEL, RESAMPLES, SEED, K, Level
from judgepool.metrics import floors as metrics
from judgepool.pooling.store import floors as stored
from judgepool.pooling.store.floors import Floor, FloorChange

__all__ = ["Floor", "FloorChange", "FloorCheck", "check_floors", "floors", "set_floors"]


def set_floors(
    store: Store,
    floors: Mapping[str, float | None] | Sequence[str],
    *,
    level: Level = LEVEL,
    from_run: str | None = None,
    lower: bool = False,
    by: str | None = None,
    note: str | None = None,
    labeller: str | None = None,
    k: int = K,
    gate: float = GATE,
    force: bool = False,
) -> list[FloorChange]:
    """Record floors: `{"nR@10": 0.75}` or `["nR@10=0.75", "R(rel=3)@10"]`, where a measure
    without a value takes `from_run`'s current mean (refused while that run is under the gate,
    unless `force`). A floor only rises: lowering one is refused (nothing written) unless
    `lower`."""
    return metrics.set_floors(
        store,
        floors,
        level=level,
        from_run=from_run,
        lower=lower,
        by=by,
        note=note,
        labeller=labeller,
        k=k,
        gate=gate,
        force=force,
    )


def floors(store: Store, *, level: Level | None = None, history: bool = False) -> list[Floor]:
    """The floors in force at `level` (None: every level), or every setting ever made, oldest
    first, with `history`."""
    return (stored.floor_history if history else stored.current_floors)(store, level)


def check_floors(
    store: Store,
    run: str,
    *,
    level: Level = LEVEL,
    lower_bound: bool = False,
    labeller: str | None = None,
    k: int = K,
    gate: float = GATE,
    force: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> FloorCheck:
    """`run` against every floor of `level`: its mean, or its 95% interval's lower end with
    `lower_bound` (`exit_code` 5 under a floor, 3 under the judged@k gate, 0 above every floor;
    `force` shows the figures of a run under the gate, still exit 3)."""
    return FloorCheck(
        metrics.check_floors(
            store,
            run,
            level=level,
            lower_bound=lower_bound,
            labeller=labeller,
            k=k,
            resamples=resamples,
            seed=seed,
            gate=gate,
            force=force,
        )
    )
