"""The floor calls of `jp.Database`: floors under measures' means that only ever rise, and a
run checked against them (the same functions as `judgepool floors set | list | check`).

    db.set_floors({"nR@10": 0.75})         # or ["nR@10=0.75", "R(rel=3)@10"] from a run's mean
    db.floors()                            # polars: the floors in force, with who and when
    db.check_floors("splade").ok           # .broken, .table, .exit_code, raise_for_floors()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from judgepool.ci_results import FloorCheck
    from judgepool.pooling.floors import FloorChange
    from judgepool.pooling.store import Store


class FloorMethods:
    """Mixed into `jp.Database` (which provides `store`)."""

    store: Store

    def set_floors(
        self,
        floors: dict[str, float | None] | Sequence[str],
        level: str = "chunk",
        *,
        from_run: str | None = None,
        lower: bool = False,
        by: str | None = None,
        note: str | None = None,
        labeller: str | None = None,
    ) -> list[FloorChange]:
        """Record floors under measures' means: `{"nR@10": 0.75}`, or `["nR@10=0.75",
        "R(rel=3)@10"]` where a measure without a value takes `from_run`'s current mean. A
        floor only rises: lowering one raises `UsageError` (nothing written) unless `lower`."""
        from judgepool.metrics.floors import set_floors

        return set_floors(self.store, floors, level, from_run=from_run, lower=lower, by=by,
                          note=note, labeller=labeller)  # fmt: skip

    def floors(self, level: str | None = None, history: bool = False) -> pl.DataFrame:
        """The floors in force (every setting ever made with `history`), with who and when."""
        from judgepool.ci_results import floors_frame
        from judgepool.pooling.floors import current_floors, floor_history

        found = (floor_history if history else current_floors)(self.store, level)
        return floors_frame(found)

    def check_floors(
        self,
        run: str,
        level: str = "chunk",
        *,
        lower_bound: bool = False,
        labeller: str | None = None,
        force: bool = False,
        resamples: int = 10_000,
        seed: int | None = None,
    ) -> FloorCheck:
        """`run` against every floor of `level`: its mean (or its 95% interval's lower end with
        `lower_bound`); `.ok`, `.broken`, `.table`, `.exit_code` and `raise_for_floors()`."""
        from judgepool.ci_results import FloorCheck
        from judgepool.metrics.bootstrap import DEFAULT_SEED
        from judgepool.metrics.floors import check_floors

        return FloorCheck(check_floors(
            self.store, run, level, lower_bound=lower_bound, labeller=labeller, force=force,
            resamples=resamples, seed=DEFAULT_SEED if seed is None else seed,
        ))  # fmt: skip
