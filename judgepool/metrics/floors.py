"""Floors: set them from values or from a run's current mean, and check a run against them.

`set_floors` records `MEASURE=VALUE` floors, or, for a measure given without a value, the current
mean of `from_run` (the natural way to start: "never fall below what we have now"). Measures are
any the evaluation computes (ir-measures strings, stored in ir-measures' spelling). A floor only
rises (pooling/store/floors.py refuses to lower one unless `lower=True`).

`check_floors` evaluates a run on the floors' measures and compares each floor with the run's
mean, or with the lower end of its 95% interval (`lower_bound=True`, the stricter check: the
run must be above the floor with confidence). A measure with no value for the run (no query to
average) breaks its floor: nothing passes silently. Exit codes (`FloorFigures.exit_code`): 5 when
a floor is broken, 3 when the run is under the judged@k gate (forced or not: holes counted as
non-relevant would decide the check), 0 otherwise. A floor taken from a run is refused while
that run is under the gate, unless forced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgepool.defaults import GATE, LEVEL, RESAMPLES, SEED, K, Level
from judgepool.errors import (
    Call,
    GateRefusedError,
    JudgepoolError,
    Param,
    Placeholder,
    UnderFloorError,
    UsageError,
    counted,
    remedy,
)
from judgepool.metrics.evaluate import EvaluationFigures, Interval, evaluate
from judgepool.metrics.gate import (
    RefusedRun,
    check_gate,
    describe,
    fill_command,
    refusal,
    under_gate,
)
from judgepool.metrics.measures import parse_measure
from judgepool.metrics.ranges import value_range
from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.store import floors as stored
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.floors import Floor, FloorChange, NewFloor


def parse_floor(text: str) -> tuple[str, float | None]:
    """`nR@10=0.75` -> ("nR@10", 0.75); `R(rel=3)@10` -> ("R(rel=3)@10", None) (a value to take
    from a run). The value follows the last `=` when what precedes it is a measure."""
    name, sep, value = text.rpartition("=")
    if sep:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None:
            return str(parse_measure(name)), number
    return str(parse_measure(text)), None


def _gate_refused(ev: EvaluationFigures, run: str, gate: float) -> RefusedRun | None:
    s = ev.summaries[run]
    found = under_gate(
        [run], {run: s.judged_exact}, {run: s.holes}, gate, {run: s.missing}, len(ev.qids)
    )
    return found[0] if found else None


def check_floor_value(measure: str, value: float) -> None:
    """Refuse a floor no run can meet (above the measure's range) or no run can break (below
    it), and one that is not a finite number: either way the floor would check nothing."""
    known = value_range(parse_measure(measure))
    within = "" if known is None else f" {known.phrase}"
    example = f"{measure}={1 if known is not None and known.high is None else 0.5}"
    finite = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not finite:
        raise UsageError(
            f"a floor of {value!r} for {measure} is not a finite number",
            f"give a number{within}, e.g. {example}",
            value=value,
        )
    if known is None or value in known:
        return
    raise UsageError(
        f"a floor of {value:g} for {measure} is outside the values it can take ({known}): "
        f"it would {'never fail' if value < known.low else 'fail every run'}; nothing was changed",
        remedy(
            f"give a value{within}, e.g. {example.replace('{', '{{').replace('}', '}}')}, or "
            "take a run's current mean: {}",
            Call.of("set_floors", (measure,), from_run=Placeholder("RUN")),
        ),
        value=value,
    )


_SPEC = Placeholder("MEASURE=VALUE")
_LOWER = Call.of("set_floors", (_SPEC,), lower=True)  # the way to lower one on purpose


def _refusal(store: Store, ev: EvaluationFigures, r: RefusedRun, gate: float) -> GateRefusedError:
    command = fill_command(store, ev.k, [r.run], ev.level, ev.labeller) if r.holes else None
    return refusal([r], ev.k, gate, command)


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
    """Record floors: `{"nR@10": 0.75}` or `["nR@10=0.75", "R(rel=3)@10"]`; a measure without
    a value takes `from_run`'s current mean (refused while that run is under the gate, unless
    `force`)."""
    check_gate(gate)
    items = floors.items() if isinstance(floors, Mapping) else map(parse_floor, floors)
    wanted = [(str(parse_measure(m)), v) for m, v in items]
    for measure, value in wanted:
        if value is not None:
            check_floor_value(measure, value)
    missing = [m for m, v in wanted if v is None]
    if missing and from_run is None:
        raise UsageError(
            f"no value for {', '.join(missing)}",
            remedy(
                "give MEASURE=VALUE, or {} to record that run's current mean",
                Param("from_run", Placeholder("RUN")),
            ),
        )
    new = [NewFloor(m, v) for m, v in wanted if v is not None]
    if missing and from_run is not None:
        spec = EvalSpec(level=level, labeller=labeller, k=k, measures=tuple(missing), resamples=1)
        ev = evaluate(store, [from_run], spec)
        refused = _gate_refused(ev, from_run, gate)
        if refused is not None and not force:
            raise _refusal(store, ev, refused, gate)
        means = ev.summaries[from_run].mean
        empty = [m for m in missing if means[m] is None]
        if empty:
            raise UsageError(
                f"{from_run} has no value on {', '.join(empty)} (no query to average)",
                "choose measures the labels define, or give the value: MEASURE=VALUE",
            )
        new += [NewFloor(m, float(x), from_run) for m in missing if (x := means[m]) is not None]
    order = [m for m, _ in wanted]
    new.sort(key=lambda f: order.index(f.measure))
    return stored.set_floors(store, new, level, lower=lower, by=by, note=note)


@dataclass(frozen=True)
class FloorResult:
    """One floor against the run: its mean, interval, the figure compared, and the verdict."""

    floor: Floor
    mean: float | None
    ci95: Interval | None
    compared: float | None  # the mean, or the interval's lower end with lower_bound
    under: bool


@dataclass(frozen=True)
class FloorFigures:
    """A run checked against the floors of a level."""

    run: str
    level: str
    lower_bound: bool
    results: tuple[FloorResult, ...]
    refused: RefusedRun | None  # the run is under the judged@k gate
    forced: bool
    evaluation: EvaluationFigures
    gate: float
    command: Call | None  # the judge call that fills the run's holes, when it is refused

    @property
    def broken(self) -> tuple[FloorResult, ...]:
        """The floors the run is under."""
        return tuple(r for r in self.results if r.under)

    @property
    def exit_code(self) -> int:
        """3: under the judged@k gate; 5: under a floor; 0: above every floor."""
        if self.refused is not None:
            return 3
        return 5 if self.broken else 0

    def error(self) -> JudgepoolError | None:
        """The error the CLI exits with, None when the run is above every floor."""
        ev = self.evaluation
        if self.refused is not None:
            if not self.forced:
                return refusal([self.refused], ev.k, self.gate, self.command)
            return GateRefusedError(
                f"floors cannot be checked on a run under the judged@{ev.k} gate of "
                f"{self.gate:g} ({describe(self.refused, ev.k, self.gate)}): its figures are "
                "UNRELIABLE",
                (remedy("fill the holes with: {}, then", self.command) if self.command else "then")
                + remedy(" check again without {}", Param("force")),
            )
        if not self.broken:
            return None
        what = "the lower end of its 95% interval" if self.lower_bound else "its mean"
        said = "; ".join(
            f"{r.floor.measure} {'no value' if r.compared is None else f'{r.compared:.4f}'} "
            f"< floor {r.floor.value:g}"
            for r in self.broken
        )
        return UnderFloorError(
            f"{self.run} is under {counted(len(self.broken), 'floor')} at the {self.level} level "
            f"({what}): {said}",
            remedy("fix the change; to lower a floor on purpose: {}", _LOWER),
            value=self.run,
        )


def check_floors(
    store: Store,
    run: str,
    *,
    level: Level = LEVEL,
    lower_bound: bool = False,
    labeller: str | None = None,
    k: int = K,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    gate: float = GATE,
    force: bool = False,
) -> FloorFigures:
    """Check `run` against every floor at `level` (refused when there is none)."""
    check_gate(gate)
    floors = stored.current_floors(store, level)
    if not floors:
        raise UsageError(
            f"no floor is set at the {level} level",
            remedy(
                "set floors first: {} (or {})",
                Call.of("set_floors", (_SPEC,)),
                Call.of("set_floors", (Placeholder("MEASURE"),), from_run=Placeholder("RUN")),
            ),
        )
    spec = EvalSpec(
        level=level,
        labeller=labeller,
        k=k,
        measures=tuple(f.measure for f in floors),
        resamples=resamples,
        seed=seed,
    )
    ev = evaluate(store, [run], spec)
    refused = _gate_refused(ev, run, gate)
    command = None
    if refused is not None and refused.holes:
        command = fill_command(store, ev.k, [run], ev.level, ev.labeller)
    results: list[FloorResult] = []
    if refused is None or force:
        s = ev.summaries[run]
        for f in floors:
            mean, ci = s.mean[f.measure], s.ci95[f.measure]
            compared = (ci[0] if ci is not None else None) if lower_bound else mean
            results.append(
                FloorResult(f, mean, ci, compared, compared is None or compared < f.value)
            )
    return FloorFigures(run, level, lower_bound, tuple(results), refused, force, ev, gate, command)
