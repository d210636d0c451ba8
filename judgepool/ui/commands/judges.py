"""`judgepool judges ...`: judges against judges. `rank` ranks the runs under each judge (does the
verdict depend on the judge?), `agreement` measures how much judges agree on the pairs they both
labelled. The numbers come from api/judges.py; `compare --by-judge` prints the same ranking for
the compared runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from judgepool.api.store import Store
from judgepool.defaults import GATE, RESAMPLES, SEED, K, Level
from judgepool.ui.format import echo_json, echo_table, fmt_float
from judgepool.ui.options import level_option, runs_option

if TYPE_CHECKING:
    from judgepool.api.judges import RankingsByJudge


def by_judge_json(found: RankingsByJudge) -> dict[str, Any]:
    """The rankings as plain data (the `by_judge` key of `compare --by-judge --format json`)."""
    return {
        "measure": found.measure,
        "baseline": found.baseline,
        "runs": list(found.runs),
        "judges": [
            {
                "labeller": j.labeller,
                "means": j.means,
                "ranks": j.ranks,
                "judged": j.judged,
                "under_gate": list(j.under_gate),
                "fooled_by_canaries": j.fooled,
                "comparisons": [
                    {
                        "candidate": d.candidate,
                        "measure": d.measure,
                        "delta": d.delta,
                        "ci95": None if d.ci95 is None else list(d.ci95),
                        "p_holm": d.p_holm,
                        "significant": d.significant,
                    }
                    for d in j.deltas
                ],
            }
            for j in found.judges
        ],
        "kendall_tau": [{"first": a, "second": b, "tau": t} for a, b, t in found.tau],
        "same_order": found.same_order,
        "verdicts_agree": found.verdicts_agree,
    }


def print_by_judge(found: RankingsByJudge) -> None:
    """The runs' means and ranks per judge, Kendall's tau between judges, and the verdicts."""
    short = {j.labeller: f"J{i}" for i, j in enumerate(found.judges, start=1)}
    click.echo(
        f"ranking of {len(found.runs)} runs by {found.measure} under each of "
        f"{len(found.judges)} judges ({found.level} level; human labels always count):"
    )
    for j in found.judges:
        marks = ", FOOLED BY CANARIES" if j.fooled else ""
        under = (
            f", under the judged@{found.k} gate: {', '.join(j.under_gate)}" if j.under_gate else ""
        )
        click.echo(f"  {short[j.labeller]} = {j.labeller}{marks}{under}")
    rows = [
        [run, *(f"{fmt_float(j.means[run])} ({j.ranks[run] or '–'})" for j in found.judges)]
        for run in found.runs
    ]
    echo_table(["run", *(short[j.labeller] for j in found.judges)], rows)
    click.echo("Kendall's tau between the judges' rankings:")
    echo_table(
        ("judge", "judge", "tau"),
        [(short[a], short[b], fmt_float(t)) for a, b, t in found.tau],
        right=(2,),
    )
    if found.baseline is not None:
        verdicts = [
            (
                d.candidate,
                short[j.labeller],
                f"{d.delta:+.3f}" if d.delta is not None else "–",
                "–" if d.ci95 is None else f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]",
                fmt_float(d.p_holm, 4),
                "yes" if d.significant else "no",
            )
            for j in found.judges
            for d in j.deltas
            if d.measure == found.measure
        ]
        click.echo(f"{found.measure} against {found.baseline} under each judge:")
        echo_table(
            ("candidate", "judge", "delta", "95% CI", "p(Holm)", "significant"),
            sorted(verdicts),
            right=(2, 4),
        )
    same = (
        "every judge ranks the runs in the same order"
        if found.same_order
        else "THE ORDER OF THE RUNS DEPENDS ON THE JUDGE"
    )
    if found.baseline is not None:
        same += "; the verdicts " + (
            "agree"
            if found.verdicts_agree
            else "DEPEND ON THE JUDGE (significant under some, not others)"
        )
    click.echo(same)


@click.group("judges")
def judges() -> None:
    """Judges against judges: the ranking of runs under each, and their agreement."""


@judges.command("rank")
@runs_option
@level_option
@click.option(
    "--judge",
    "labellers",
    multiple=True,
    metavar="LABELLER",
    help="A judge to rank under (repeat) [default: every judge at the level].",
)
@click.option("--measure", default=None, metavar="MEASURE", help="[default: nDCG@K]")
@click.option(
    "--baseline",
    default=None,
    metavar="RUN",
    help="Also compare the other runs with this one under each judge.",
)
@click.option("--k", "k", type=click.IntRange(min=1), default=K, show_default=True)
@click.option("--gate", type=click.FloatRange(0.0, 1.0), default=GATE, show_default=True)
@click.option("--resamples", type=click.IntRange(min=1), default=RESAMPLES, show_default=True)
@click.option("--seed", type=int, default=SEED, show_default=True)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def rank(
    store: Store,
    runs: tuple[str, ...],
    level: Level,
    labellers: tuple[str, ...],
    measure: str | None,
    baseline: str | None,
    k: int,
    gate: float,
    resamples: int,
    seed: int,
    fmt: str,
) -> None:
    """Rank the runs under each judge, with Kendall's tau between the judges' rankings.

    \b
    Examples:
      judgepool judges rank
      judgepool judges rank --run bm25 --run splade --baseline bm25
      judgepool judges rank --judge openai/gpt-4o-mini@relevance-v1 --judge offline:...
    """
    from judgepool.api.judges import rank_by_judge

    found = rank_by_judge(
        store,
        runs,
        judges=labellers,
        level=level,
        k=k,
        measure=measure,
        baseline=baseline,
        resamples=resamples,
        seed=seed,
        gate=gate,
    )
    if fmt == "json":
        echo_json(by_judge_json(found))
    else:
        print_by_judge(found)


@judges.command("agreement")
@level_option
@click.option(
    "--judge",
    "labellers",
    multiple=True,
    metavar="LABELLER",
    help="A judge to include (repeat) [default: every judge at the level].",
)
@click.pass_obj
def agreement(store: Store, level: Level, labellers: tuple[str, ...]) -> None:
    """Agreement between judges on the pairs they both labelled: Cohen's kappa for every two,
    Krippendorff's alpha over all, and the confusion matrices."""
    from judgepool.api.judges import judges_agreement

    found = judges_agreement(store, level=level, judges=labellers)
    click.echo(
        f"{len(found.labellers)} judges, {found.units} pairs labelled by at least two "
        f"({level} level): "
        f"Krippendorff's alpha (ordinal) {fmt_float(found.alpha_ordinal)}, (nominal) "
        f"{fmt_float(found.alpha_nominal)}"
    )
    echo_table(
        ("judge", "judge", "pairs", "exact", "kappa 0-3", "kappa >=2", "quadratic"),
        [
            (
                p.first,
                p.second,
                p.pairs,
                fmt_float(p.exact),
                fmt_float(p.kappa),
                fmt_float(p.kappa_binary),
                fmt_float(p.kappa_quadratic),
            )
            for p in found.pairwise
        ],
        right=(2, 3, 4, 5, 6),
    )
