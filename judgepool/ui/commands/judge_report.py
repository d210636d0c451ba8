"""What `judgepool judge` prints of what the service (judgepool/api/judge.py) reports: the plan
before the run (`Planned`, told by the service), the dry-run forecast, a run's summary, judged@k
before and after, and how it exits.

Exit codes (README, "Filling the holes with an LLM judge"): 0 every hole with text has a label
now (some may have been labelled by another judge running at the same time); 1 the run stopped
on an error that needs you (key, quota, model, a cache or database that cannot be written); 2 a
usage error; 4 some holes ended `error` or `unparsed`; 5 nothing was labelled, every hole
attempted failed; 6 a --max-cost / --max-calls cap stopped it first; 130 interrupted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judgepool.api.judge import JudgeProgress
from judgepool.api.progress import cost_text, money
from judgepool.ui.commands.judge_checks import print_canaries, print_dry_checks, print_jury
from judgepool.ui.format import echo_table, note
from judgepool.ui.reporting import cli_remedy, on_the_command_line

if TYPE_CHECKING:
    from judgepool.api.judge import (
        Forecast,
        JudgeForecast,
        JudgeReport,
        JudgeStart,
        LoopStats,
        PoolSummary,
    )

#: How the summary names each outcome (the database statuses, and two that are not).
_OUTCOMES = (
    ("ok", "ok"),
    ("unparsed", "unparsed"),
    ("error", "error"),
    ("no_text", "no_text"),
    ("by_other_judge", "by another judge"),
    ("in_batch", "in an open batch"),
    ("not_attempted", "not_attempted"),
)


class Planned(JudgeProgress):
    """Says what the run will do once the service has prepared it (stderr), and draws the bars."""

    def planned(self, start: JudgeStart) -> None:
        if start.why:
            note(cli_remedy(start.why) or "")
        if start.labeller is None:
            return
        runs = f"{start.runs} run{'' if start.runs == 1 else 's'}"
        note(
            f"judge: {start.labeller}; {start.holes} holes at depth {start.depth} "
            f"({start.level} level, {runs})"
        )
        if start.reasoning:
            note(cli_remedy(start.reasoning) or "")

    def note(self, message: str) -> None:
        note(message)


def _no_holes(before: PoolSummary) -> None:
    click.echo(f"no holes: every pooled pair at depth {before.depth} has a label")
    print_judged(before, None)


def print_dry_run(found: JudgeForecast) -> None:
    """The forecast of the holes, each judge's holes and canaries, judged@depth now."""
    if found.forecast is None:
        _no_holes(found.before.result)
        return
    print_forecast(found.forecast, found.max_tokens, found.start.model)
    print_dry_checks(found.checks)
    print_judged(found.before.result, None)


def print_run(report: JudgeReport) -> None:
    """A run's summary, its jury and canaries, judged@depth before and after; then its exit."""
    stats = report.stats
    if stats is None or report.run is None:
        _no_holes(report.before.result)
        return
    print_summary(stats)
    print_jury(report.run, report.agreement)
    print_canaries(report.run)
    print_judged(report.before.result, report.after.result)
    finish(report)


def print_forecast(found: Forecast, max_tokens: int | None, model: str) -> None:
    rows = [
        ("holes", found.holes, ""),
        ("without text", found.no_text, "labelled no_text, no call"),
        ("already in the cache", found.cached_pairs, f"{found.cached_unique} distinct texts"),
        ("to judge", found.requests - found.cached_pairs, f"{found.calls} calls (same text: one)"),
        ("truncated passages", found.truncated, "cut to --passage-tokens"),
        ("truncated queries", found.queries_truncated, "cut to --query-tokens"),
    ]
    echo_table(("dry run", "pairs", ""), rows, right=(1,))
    estimate = found.estimate
    click.echo(
        f"estimated tokens: {estimate.tokens_in:,} in, {estimate.tokens_out:,} out "
        f"(typical answer; at most {max_tokens or '?'} out per call)"
    )
    if estimate.cost is None and found.calls:
        click.echo(
            f"estimated cost: unknown — {model} has no price in litellm's price map "
            "(a local server or a new model); cap it with --max-calls"
        )
    else:
        worst = f", worst case {money(estimate.max_cost)}" if estimate.max_cost is not None else ""
        click.echo(f"estimated cost: {money(estimate.cost)}{worst}")
    if found.readiness is not None and found.calls:
        note(f"note: a real run would stop here: {on_the_command_line(found.readiness)}")


def _cost_line(stats: LoopStats) -> str:
    text = cost_text(stats.cost, stats.unpriced_calls)
    if stats.unanswered:
        worst = f" (up to ${stats.charged:.4f})" if stats.charged else " (cost unknown)"
        text += (
            f" + {stats.unanswered} request{'' if stats.unanswered == 1 else 's'} that got no "
            f"answer (timed out or cut off), charged at their worst case{worst}"
        )
    return text


def print_summary(stats: LoopStats) -> None:
    click.echo(
        f"labelled in {stats.elapsed_s:.1f} s (after {stats.prepare_s:.1f} s loading the judge): "
        f"{stats.calls} calls "
        f"({stats.rate_limited} answered 429, {stats.retried} retries), "
        f"{stats.cached} pairs from the cache, {stats.shared} sharing a text already paid for; "
        f"cost {_cost_line(stats)}, "
        f"tokens {stats.tokens_in:,} in / {stats.tokens_out:,} out"
    )
    echo_table(
        ("status", "pairs"),
        [(name, stats.outcomes[key]) for key, name in _OUTCOMES if stats.outcomes[key]],
        right=(1,),
    )
    if stats.grades:
        echo_table(("grade", "pairs"), sorted(stats.grades.items()), right=(0, 1))
    if stats.outcomes["by_other_judge"] or stats.other_judges:
        click.echo(
            f"{stats.outcomes['by_other_judge']} pairs were left to another judge running on this "
            f"database at the same time ({stats.other_judges} seen), which labelled them: none "
            "was paid twice"
        )
    if stats.outcomes["in_batch"]:
        click.echo(
            f"{stats.outcomes['in_batch']} pairs are in open batches ({', '.join(stats.batches)}) "
            "and were not sent again: collect them with judgepool judge --batch-collect"
        )
    if stats.taken_over:
        click.echo(
            f"{stats.taken_over} pairs were taken over from a judge that stopped without "
            "finishing them (its claims had expired)"
        )
    for why, pairs in stats.failures.most_common():
        click.echo(f"failed: {pairs} pairs: {stats.failure_examples.get(why, why)}")


def print_judged(before: PoolSummary, after: PoolSummary | None) -> None:
    """judged@depth per run (before and after), with the gate's digits: a value under the gate
    never reads as 0.900."""
    from judgepool.metrics.gate import fmt_judged

    depth = before.depth
    if after is None:
        echo_table(
            ("run", f"judged@{depth}", "holes"),
            [(r.run, fmt_judged(r.judged_exact), r.holes) for r in before.runs],
            right=(1, 2),
        )
        return
    rows = [
        (b.run, fmt_judged(b.judged_exact), fmt_judged(a.judged_exact), a.holes)
        for b, a in zip(before.runs, after.runs, strict=True)
    ]
    echo_table(("run", f"judged@{depth} before", "after", "holes left"), rows, right=(1, 2, 3))


def finish(report: JudgeReport) -> None:
    """Say how the run ended and exit with its code (see the module docstring)."""
    stats, problem = report.stats, report.problem
    if stats is None:
        return
    left = stats.outcomes["not_attempted"]
    if stats.stopped == "interrupted" and stats.fatal is None:
        note(f"interrupted: {left} pairs left; run the same command again to resume")
        raise SystemExit(130)
    if problem is None:
        return
    if stats.fatal is not None and left:
        note(
            f"{left} pairs were not labelled (the run stopped first); labels written so far "
            "are kept"
        )
    raise problem
