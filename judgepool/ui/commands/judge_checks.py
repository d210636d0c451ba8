"""`judgepool judge`'s quality controls on the command line: the options for several judges and
for canaries, and what is printed about them (members, the jury, agreement between the judges,
the canary check with the pairs that fooled the judge), from what the service
(judgepool/api/judge.py) reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgepool.api.options import JUDGE_DEFAULTS
from judgepool.api.progress import money
from judgepool.ui.format import echo_table, fmt_float

if TYPE_CHECKING:
    from judgepool.api.judge import CanaryReport, Forecast, JudgeRun
    from judgepool.metrics.judges import JudgesAgreement

F = TypeVar("F", bound=Callable[..., Any])
#: Canary pairs listed in full under the table (the rest are in the labels, purpose canary).
LISTED = 20


def canary_options(func: F) -> F:
    """--canaries N, --no-canaries, --canary-threshold (`judge` and `calibrate`)."""
    for option in reversed(
        (
            click.option(
                "--canaries",
                "canaries",
                type=click.IntRange(min=1),
                default=None,
                metavar="N",
                help="Canaries (planted pairs of grade 0) per drawn query, "
                "for up to 50 queries [2].",
            ),
            click.option("--no-canaries", is_flag=True, help="Plant no canary in this run."),
            click.option(
                "--canary-threshold",
                type=click.FloatRange(0.0, 1.0),
                default=JUDGE_DEFAULTS.canary_threshold,
                show_default=True,
                help="A kind of canary graded >= 2 more often than "
                "this marks the judge fooled by canaries.",
            ),
        )
    ):
        func = option(func)
    return func


def control_options(func: F) -> F:
    """--combine, --num-samples, and the canary options."""
    for option in reversed(
        (
            click.option(
                "--combine",
                type=click.Choice(["median", "majority", "mean"]),
                default=JUDGE_DEFAULTS.combine,
                show_default=True,
                help="How several judges' grades become one (ties: the lower grade).",
            ),
            click.option(
                "--num-samples",
                type=click.IntRange(min=1),
                default=JUDGE_DEFAULTS.num_samples,
                show_default=True,
                help="Ask each model K times at a temperature > 0 [0.7] and combine.",
            ),
            canary_options,
        )
    ):
        func = option(func)
    return func


def canaries_per_query(canaries: int | None, no_canaries: bool) -> int:
    """The number of canaries per query the options ask for (0: none)."""
    from judgepool.errors import UsageError

    if no_canaries and canaries is not None:
        raise UsageError("--canaries and --no-canaries contradict", "give one of them")
    return 0 if no_canaries else (JUDGE_DEFAULTS.canaries if canaries is None else canaries)


def split_models(models: tuple[str, ...], api_bases: tuple[str, ...]) -> dict[str, Any]:
    """JudgeOptions fields for the --model / --api-base given (one model, or a jury)."""
    if len(models) <= 1:
        if len(api_bases) > 1:
            from judgepool.errors import UsageError

            raise UsageError(f"{len(api_bases)} --api-base for one --model", "give --api-base once")
        return {
            "model": models[0] if models else None,
            "api_base": api_bases[0] if api_bases else None,
        }
    return {"models": models, "api_bases": api_bases}


def print_dry_checks(found: Sequence[tuple[str, Forecast, Forecast | None]]) -> None:
    """Per judge beyond the first, its holes; for every judge, its canaries."""
    for labeller, holes, canaries in found:
        if len(found) > 1:
            click.echo(
                f"{labeller}: {holes.calls} calls for the holes "
                f"({holes.cached_pairs} pairs in the cache), estimated cost "
                f"{money(holes.estimate.cost)}"
            )
        if canaries is not None:
            click.echo(
                f"canaries for {labeller}: {canaries.requests} pairs, {canaries.calls} "
                f"calls ({canaries.cached_pairs} in the cache), estimated cost "
                f"{money(canaries.estimate.cost)}"
            )
    if len(found) > 1 or any(c is not None for _, _, c in found):
        click.echo(_dry_total(found))


def _dry_total(found: Sequence[tuple[str, Forecast, Forecast | None]]) -> str:
    """What the whole run asks: every judge's holes and canaries (the headline above is the
    first judge's holes only). A judge without a price makes the cost unknown, never $0."""
    parts = [
        (name, f) for name, holes, canaries in found for f in (holes, canaries) if f is not None
    ]
    holes = sum(h.calls for _, h, _ in found)
    planted = sum(c.calls for _, _, c in found if c is not None)
    unpriced = list(dict.fromkeys(n for n, f in parts if f.calls and f.estimate.cost is None))
    cost = None if unpriced else sum(f.estimate.cost or 0.0 for _, f in parts)
    why = f" ({', '.join(unpriced)} has no price)" if unpriced else ""
    return (
        f"whole run: {holes + planted} calls ({holes} for the holes, {planted} for the "
        f"canaries), estimated cost {money(cost)}{why}"
    )


def _members(run: JudgeRun) -> None:
    rows = []
    for m in run.members:
        s = m.stats
        if s is None:
            continue
        rows.append(
            (
                m.labeller,
                s.outcomes["ok"],
                s.failed,
                s.outcomes["not_attempted"],
                s.calls,
                s.cached,
                fmt_float(s.cost, 4),
            )
        )
    echo_table(
        ("member", "ok", "failed", "not attempted", "calls", "from cache", "cost $"),
        rows,
        right=(1, 2, 3, 4, 5, 6),
    )


def _agreement(run: JudgeRun, found: JudgesAgreement) -> None:
    names = [m.labeller for m in run.members]
    click.echo(
        f"agreement between the {len(names)} judges on the {found.units} pairs at least two "
        f"graded in this run: Krippendorff's alpha (ordinal) {fmt_float(found.alpha_ordinal)}, "
        f"(nominal) {fmt_float(found.alpha_nominal)}"
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
    for p in found.pairwise:
        click.echo(f"confusion (rows: {p.first}, columns: {p.second}, grades 0 1 2 3):")
        for grade, row in enumerate(p.confusion):
            click.echo(f"  {grade}: " + " ".join(f"{n:>4}" for n in row))


def print_jury(run: JudgeRun, agreement: JudgesAgreement | None) -> None:
    """The members' work, the jury's combined labels, and how much the judges agree."""
    if run.jury is None or agreement is None:
        return
    jury = run.jury
    _members(run)
    ties = f", {jury.ties} ties broken towards the lower grade" if jury.ties else ""
    failed = f", {jury.failed} not combined (a member failed)" if jury.failed else ""
    left = f", {jury.unanswered} not answered by every member" if jury.unanswered else ""
    click.echo(
        f"jury {jury.labeller}: {jury.ok} pairs combined by {jury.combine}{ties}{failed}{left}"
    )
    _agreement(run, agreement)


def _checked(run: JudgeRun) -> list[CanaryReport]:
    found = [m.canaries for m in run.members if m.canaries is not None]
    if run.jury is not None and run.canaries is not None:
        found.append(run.canaries)
    return found


def _interval(interval: tuple[float, float] | None) -> str:
    return "–" if interval is None else f"[{interval[0]:.0%}, {interval[1]:.0%}]"


def print_canaries(run: JudgeRun) -> None:
    """The canary check: per judge and kind the rate graded >= 2, the verdict, the pairs."""
    plan = run.canary_plan
    if plan is None or not plan.requests:
        if plan is not None and plan.queries:
            click.echo(
                f"canaries: none planted: no unrelated passage found for any of the "
                f"{len(plan.queries)} queries drawn"
            )
        return
    if run.canary_note is not None and not _checked(run):
        click.echo(f"canaries: {len(plan.requests)} planned, {run.canary_note}")
        return
    reports = _checked(run)
    missing = (
        f"; {len(plan.without_source)} drawn queries had no unrelated passage"
        if plan.without_source
        else ""
    )
    click.echo(
        f"\ncanaries: {len(plan.requests)} planted pairs of true grade 0 on "
        f"{len(plan.queries) - len(plan.without_source)} queries (seed {plan.seed}){missing}; "
        f"{run.canary_calls} calls, cost ${run.canary_cost:.4f}"
        + (f"; {run.canary_note}" if run.canary_note else "")
    )
    rows = [
        (
            r.labeller,
            k.kind,
            k.pairs,
            k.graded,
            k.fooled,
            "–" if k.rate is None else f"{k.rate:.0%}",
            _interval(k.interval),
        )
        for r in reports
        for k in r.kinds
    ]
    echo_table(
        ("judge", "kind", "pairs", "graded", "graded >= 2", "rate", "95% interval"),
        rows,
        right=(2, 3, 4, 5),
    )
    for report in reports:
        if report.fooled:
            click.echo(
                f"FOOLED BY CANARIES: {report.labeller} graded >= 2 more than "
                f"{report.threshold:.0%} of a kind of canary (the lower end of its 95% interval "
                "is above it); every report that uses its labels says so (a passage's words, "
                "instructions or a forged answer can move its grades)"
            )
        elif report.undecided:
            click.echo(
                f"canaries: too few canaries to tell whether {report.labeller} is fooled: a "
                f"kind's rate is above {report.threshold:.0%} but its 95% interval reaches "
                "below it (plant more with --canaries N per query)"
            )
    counted = reports[-1]
    fooling = [p for p in counted.pairs if p.fooled]
    if fooling:
        click.echo(f"canaries {counted.labeller} graded >= 2:")
        for p in fooling[:LISTED]:
            text = p.text if len(p.text) <= 90 else p.text[:87] + "..."
            click.echo(f"  {p.qid}  {p.doc_id}  grade {p.grade}  (from {p.source_doc}) {text!r}")
        if len(fooling) > LISTED:
            click.echo(f"  ... and {len(fooling) - LISTED} more (labels with purpose 'canary')")
