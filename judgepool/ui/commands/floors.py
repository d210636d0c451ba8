"""`judgepool floors set | check | list`: floors under measures' means, a CI check (exit 5).

The floors live in the database (every setting with who and when; a floor only rises unless
--lower); the services in api/floors.py take a floor from a run's mean and check a run.
"""

from __future__ import annotations

import click

from judgepool.api.store import Store
from judgepool.defaults import GATE, LEVELS, RESAMPLES, SEED, K, Level
from judgepool.ui.format import echo_json, echo_table, fmt_float
from judgepool.ui.options import judge_option, level_option

_K = click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=K,
    show_default=True,
    help="The cutoff of judged@K, which the gate decides on.",
)
_GATE = click.option(
    "--gate",
    type=click.FloatRange(0.0, 1.0),
    default=GATE,
    show_default=True,
    help="Refuse a run whose judged@K is under this share.",
)


@click.group("floors")
def floors() -> None:
    """Floors a run's means may not fall under: set them, list them, check a run (exit 5).

    \b
      judgepool floors set nR@10=0.75 'R(rel=3)@10=0.6'
      judgepool floors set --from bm25 nR@10      # record bm25's current mean
      judgepool floors check candidate            # exit 5 when under a floor
    """


@floors.command("set")
@click.argument("specs", nargs=-1, required=True, metavar="MEASURE[=VALUE]...")
@click.option(
    "--from",
    "--run",
    "from_run",
    default=None,
    metavar="RUN",
    help="Take the value of each MEASURE given without one from RUN's current mean "
    "(recorded with the floor). --run is the same option.",
)
@click.option(
    "--lower", is_flag=True, help="Allow lowering a floor (refused otherwise; recorded as lowered)."
)
@click.option(
    "--by",
    "by",
    default=None,
    metavar="NAME",
    help="Who sets the floors [default: the login name].",
)
@click.option("--note", default=None, help="Why, recorded with the floors.")
@level_option
@judge_option
@_K
@_GATE
@click.option("--force", is_flag=True, help="Take a floor from a run under the gate anyway.")
@click.pass_obj
def set_command(
    store: Store,
    specs: tuple[str, ...],
    from_run: str | None,
    lower: bool,
    by: str | None,
    note: str | None,
    level: Level,
    labeller: str | None,
    k: int,
    gate: float,
    force: bool,
) -> None:
    """Record floors: MEASURE=VALUE (any ir-measures measure), or MEASURE with --from RUN.

    A floor only rises: a value under the current floor is refused, and nothing is written,
    unless --lower is given. Every setting is kept with who set it and when (floors list
    --history).
    """
    from judgepool.api.floors import set_floors

    changes = set_floors(
        store,
        list(specs),
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
    for c in changes:
        source = "" if from_run is None or c.change == "unchanged" else f" (from {from_run})"
        was = "" if c.before is None else f", was {c.before.value:g}"
        click.echo(
            f"floor {c.measure} at the {c.level} level: {c.value:g}{source} [{c.change}{was}]"
        )


@floors.command("list")
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default=None,
    help="Only this level's floors [default: every level].",
)
@click.option("--history", is_flag=True, help="Every setting ever made, oldest first.")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def list_command(store: Store, level: Level | None, history: bool, fmt: str) -> None:
    """The floors in force (the latest setting of each level and measure)."""
    from judgepool.api.floors import floors as list_floors

    found = list_floors(store, level=level, history=history)
    if fmt == "json":
        echo_json([vars(f) for f in found])
        return
    if not found:
        click.echo("no floor is set (judgepool floors set MEASURE=VALUE)")
        return
    rows = [
        [
            f.level,
            f.measure,
            f"{f.value:g}",
            f.from_run or "–",
            "lowered" if f.lowered else "",
            f.set_by,
            f.set_at,
            f.note or "",
        ]
        for f in found
    ]
    echo_table(
        ["level", "measure", "floor", "from run", "", "set by", "set at (UTC)", "note"],
        rows,
        right=(2,),
    )


@floors.command("check")
@click.argument("run")
@click.option(
    "--lower-bound",
    is_flag=True,
    help="Compare the lower end of the run's 95% interval with each floor, not its "
    "mean (the run must clear the floor with confidence).",
)
@level_option
@judge_option
@_K
@_GATE
@click.option(
    "--force",
    is_flag=True,
    help="Show the figures of a run under the gate (marked UNRELIABLE; still exit 3).",
)
@click.option("--resamples", type=click.IntRange(min=1), default=RESAMPLES, show_default=True)
@click.option("--seed", type=int, default=SEED, show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def check_command(
    store: Store,
    run: str,
    lower_bound: bool,
    level: Level,
    labeller: str | None,
    k: int,
    gate: float,
    force: bool,
    resamples: int,
    seed: int,
    fmt: str,
) -> None:
    """Check RUN against every floor of the level: exit 5 when it is under one, 3 when it is
    under the judged@K gate, 0 when it clears every floor."""
    from judgepool.api.floors import check_floors

    done = check_floors(
        store,
        run,
        level=level,
        lower_bound=lower_bound,
        labeller=labeller,
        k=k,
        gate=gate,
        force=force,
        resamples=resamples,
        seed=seed,
    ).result
    if fmt == "json":
        echo_json(
            {
                "run": done.run,
                "level": done.level,
                "lower_bound": done.lower_bound,
                "refused": done.refused is not None and not done.forced,
                "unreliable": done.refused is not None and done.forced,
                "exit_code": done.exit_code,
                "floors": [
                    {
                        "measure": r.floor.measure,
                        "floor": r.floor.value,
                        "mean": r.mean,
                        "ci95": None if r.ci95 is None else list(r.ci95),
                        "compared": r.compared,
                        "under": r.under,
                        "set_by": r.floor.set_by,
                        "set_at": r.floor.set_at,
                    }
                    for r in done.results
                ],
            }
        )
    elif done.results:
        which = "lower end of the 95% interval" if lower_bound else "mean"
        flag = " (UNRELIABLE: under the judged@k gate)" if done.refused is not None else ""
        click.echo(f"floors of {run} at the {level} level, compared with its {which}{flag}:")
        rows = [
            [
                r.floor.measure,
                f"{r.floor.value:g}",
                fmt_float(r.mean),
                "–" if r.ci95 is None else f"[{fmt_float(r.ci95[0])}, {fmt_float(r.ci95[1])}]",
                "UNDER" if r.under else "ok",
            ]
            for r in done.results
        ]
        echo_table(["measure", "floor", "mean", "95% CI", "verdict"], rows, right=(1, 2))
    error = done.error()
    if error is not None:
        raise error
