"""What the library's CI features return: group figures, a floor check, floors, as polars.

`jp.Evaluation.groups` / `jp.Comparison.groups` (`by="group"`), `db.check_floors(...)` and
`db.floors()` build their DataFrames here; the figures come from metrics/ (groups, floors).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from judgepool.metrics.floors import FloorFigures as CheckResult
    from judgepool.metrics.groups import Groups
    from judgepool.pooling.store.floors import Floor


def _frame(rows: list[dict[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=schema, orient="row")


def group_means_frame(groups: Groups) -> pl.DataFrame:
    """One row per group, run and measure: n, mean, ci_low, ci_high, too_small."""
    import polars as pl

    rows = [
        {
            "group": m.group,
            "run": m.run,
            "measure": m.measure,
            "n": m.n,
            "mean": m.mean,
            "ci_low": m.ci95[0] if m.ci95 else None,
            "ci_high": m.ci95[1] if m.ci95 else None,
            "too_small": m.too_small,
        }
        for m in groups.means
    ]
    return _frame(
        rows,
        {
            "group": pl.String,
            "run": pl.String,
            "measure": pl.String,
            "n": pl.Int64,
            "mean": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "too_small": pl.Boolean,
        },
    )


def group_deltas_frame(groups: Groups) -> pl.DataFrame:
    """One row per group, candidate and measure: n, delta, interval, p, p_holm, significant,
    too_small, unreliable."""
    import polars as pl

    rows = [
        {
            "group": d.group,
            "baseline": d.baseline,
            "candidate": d.candidate,
            "measure": d.measure,
            "n": d.n,
            "delta": d.delta,
            "ci_low": d.ci95[0] if d.ci95 else None,
            "ci_high": d.ci95[1] if d.ci95 else None,
            "p": d.p,
            "p_holm": d.p_holm,
            "significant": d.significant,
            "too_small": d.too_small,
            "unreliable": d.unreliable,
        }
        for d in groups.deltas
    ]
    return _frame(
        rows,
        {
            "group": pl.String,
            "baseline": pl.String,
            "candidate": pl.String,
            "measure": pl.String,
            "n": pl.Int64,
            "delta": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "p": pl.Float64,
            "p_holm": pl.Float64,
            "significant": pl.Boolean,
            "too_small": pl.Boolean,
            "unreliable": pl.Boolean,
        },
    )


def floors_frame(floors: list[Floor]) -> pl.DataFrame:
    """One row per floor setting: level, measure, value, from_run, lowered, set_by, set_at."""
    import polars as pl

    return _frame(
        [vars(f) for f in floors],
        {
            "id": pl.Int64,
            "level": pl.String,
            "measure": pl.String,
            "value": pl.Float64,
            "from_run": pl.String,
            "lowered": pl.Boolean,
            "set_by": pl.String,
            "set_at": pl.String,
            "note": pl.String,
        },
    )


@dataclass(frozen=True)
class FloorCheck:
    """A run checked against the floors of a level (`db.check_floors`)."""

    result: CheckResult

    @property
    def ok(self) -> bool:
        """Above every floor, and judged enough to say so (not under the gate)."""
        return self.result.exit_code == 0

    @property
    def exit_code(self) -> int:
        """What `judgepool floors check` exits with: 0 ok, 3 under the gate, 5 under a floor."""
        return self.result.exit_code

    @property
    def broken(self) -> list[str]:
        """The measures whose floor the run is under."""
        return [r.floor.measure for r in self.result.broken]

    @cached_property
    def table(self) -> pl.DataFrame:
        """One row per floor: measure, floor, mean, ci_low, ci_high, compared, under."""
        import polars as pl

        rows = [
            {
                "measure": r.floor.measure,
                "floor": r.floor.value,
                "mean": r.mean,
                "ci_low": r.ci95[0] if r.ci95 else None,
                "ci_high": r.ci95[1] if r.ci95 else None,
                "compared": r.compared,
                "under": r.under,
            }
            for r in self.result.results
        ]
        return _frame(
            rows,
            {
                "measure": pl.String,
                "floor": pl.Float64,
                "mean": pl.Float64,
                "ci_low": pl.Float64,
                "ci_high": pl.Float64,
                "compared": pl.Float64,
                "under": pl.Boolean,
            },
        )

    def raise_for_floors(self) -> None:
        """Raise what the CLI exits with (`UnderFloorError`, or the gate's refusal), if any."""
        error = self.result.error()
        if error is not None:
            raise error
