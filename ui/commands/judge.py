"""`judgepool judge`: fill the holes of a pool with a judge (an LLM via litellm, or offline).

The work lives in judge/ (judge.backfill); this module turns options into calls and prints:
the plan, a dry-run forecast, or a run's summary by status and grade and judged@k per run
before and after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from judgepool.pooling.errors import BudgetExceededError, UsageError
from judgepool.pooling.store import Store
from judgepool.ui.format import echo_table, note
from judgepool.ui.options import (
    all_queries_option,
    depth_option,
    judge_option,
    level_option,
    runs_option,
)

if TYPE_CHECKING:
    from judgepool.judge.backfill import Forecast, Plan
    from judgepool.judge.loop import LoopStats
    from judgepool.pooling.pool import PoolSummary

_LLM_ONLY = ("api_base", "temperature", "max_tokens", "template")


def _money(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _print_forecast(found: Forecast, max_tokens: int | None, model: str) -> None:
    rows = [
        ("holes", found.holes, ""),
        ("without text", found.no_text, "labelled no_text, no call"),
        ("already in the cache", found.cached_pairs, f"{found.cached_unique} distinct texts"),
        ("to judge", found.requests - found.cached_pairs, f"{found.calls} calls (same text: one)"),
        ("truncated passages", found.truncated, "cut to --passage-tokens"),
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
        worst = f", worst case {_money(estimate.max_cost)}" if estimate.max_cost is not None else ""
        click.echo(f"estimated cost: {_money(estimate.cost)}{worst}")


def _print_summary(stats: LoopStats) -> None:
    from judgepool.judge.progress import cost_text

    click.echo(
        f"labelled in {stats.elapsed_s:.1f} s (after {stats.prepare_s:.1f} s loading the judge): "
        f"{stats.calls} calls "
        f"({stats.rate_limited} answered 429, {stats.retried} retries), "
        f"{stats.cached} pairs from the cache, {stats.shared} sharing a text already paid for; "
        f"cost {cost_text(stats.cost, stats.unpriced_calls)}, "
        f"tokens {stats.tokens_in:,} in / {stats.tokens_out:,} out"
    )
    order = ("ok", "unparsed", "error", "no_text", "not_attempted")
    echo_table(
        ("status", "pairs"),
        [(s, stats.outcomes[s]) for s in order if stats.outcomes[s]],
        right=(1,),
    )
    if stats.grades:
        echo_table(("grade", "pairs"), sorted(stats.grades.items()), right=(0, 1))


def _print_judged(before: PoolSummary, after: PoolSummary | None) -> None:
    depth = before.depth
    if after is None:
        echo_table(
            ("run", f"judged@{depth}", "holes"),
            [(r.run, f"{r.judged:.3f}", r.holes) for r in before.runs],
            right=(1, 2),
        )
        return
    rows = [
        (b.run, f"{b.judged:.3f}", f"{a.judged:.3f}", a.holes)
        for b, a in zip(before.runs, after.runs, strict=True)
    ]
    echo_table(("run", f"judged@{depth} before", "after", "holes left"), rows, right=(1, 2, 3))


def _judge_options(model: str, given: dict[str, Any]) -> dict[str, Any]:
    """Constructor options for the chosen judge; LLM options given to the offline judge are an
    error rather than silently ignored."""
    from judgepool.judge.registry import is_offline

    chosen = {k: v for k, v in given.items() if v is not None}
    if is_offline(model):
        wrong = [k for k in chosen if k in _LLM_ONLY]
        if wrong:
            flags = ", ".join("--" + k.replace("_", "-") for k in wrong)
            raise UsageError(f"{flags} apply to LLM judges, not to {model}")
        return {}
    return chosen


@click.command("judge")
@click.option(
    "--model",
    default=None,
    metavar="MODEL",
    help="litellm model (openai/gpt-4o-mini, anthropic/..., ollama/..., hosted_vllm/...)"
    " or offline[:PATH] [default: offline when no provider key is set].",
)
@click.option(
    "--api-base",
    default=None,
    metavar="URL",
    help="An OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.",
)
@depth_option
@runs_option
@level_option
@judge_option
@all_queries_option
@click.option("--dry-run", is_flag=True, help="Show holes, cache hits, tokens and cost; no call.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 512),
    default=8,
    show_default=True,
    help="Calls in flight at most (lowered automatically on 429s).",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    default=None,
    metavar="USD",
    help="Stop before spending more than this (needs a model with a known price).",
)
@click.option(
    "--max-calls",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Stop before sending more than N requests (retries included).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds per call before it counts as a timeout (retried).",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=4,
    show_default=True,
    help="Retries per pair after 5xx, timeouts and connection errors.",
)
@click.option("--temperature", type=float, default=None, help="Sampling temperature [0].")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Output token cap per call [256].",
)
@click.option(
    "--passage-tokens",
    type=click.IntRange(min=16),
    default=1024,
    show_default=True,
    help="Cut longer passages to this many tokens (flagged truncated).",
)
@click.option(
    "--max-chunks",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="--level doc: show at most this many retrieved chunks of a document.",
)
@click.option(
    "--template",
    default=None,
    metavar="NAME|FILE",
    help="Prompt template: a packaged name or a file [relevance-v1].",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show the progress bar [default: when stderr is a terminal].",
)
@click.pass_obj
def judge(
    store: Store,
    model: str | None,
    api_base: str | None,
    depth: int,
    runs: tuple[str, ...],
    level: str,
    judge: str | None,
    all_queries: bool,
    dry_run: bool,
    concurrency: int,
    max_cost: float | None,
    max_calls: int | None,
    timeout: float,
    retries: int,
    temperature: float | None,
    max_tokens: int | None,
    passage_tokens: int,
    max_chunks: int,
    template: str | None,
    progress: bool | None,
) -> None:
    """Label the holes of the pool at DEPTH with a judge, cached by content, resumable.

    \b
    Examples:
      judgepool judge --model openai/gpt-4o-mini --depth 10 --dry-run
      judgepool judge --model openai/gpt-4o-mini --depth 10 --max-cost 5
      judgepool judge --model hosted_vllm/NAME --api-base http://127.0.0.1:8000/v1
      judgepool judge --model offline
    Keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). Run the same
    command again after an interruption: it pays only for what is missing.
    """
    from judgepool.judge.backfill import backfill, forecast, plan_holes
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.loop import LoopOptions
    from judgepool.judge.progress import ProgressBar
    from judgepool.judge.registry import choose_model, make_judge
    from judgepool.pooling.pool import pool_summary

    chosen, why = choose_model(model, api_base)
    if why:
        note(why)
    options = _judge_options(
        chosen,
        {
            "api_base": api_base,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "template": template,
            "timeout": timeout,
        },
    )
    before = pool_summary(store, depth, runs, level, judge, all_queries)
    plan: Plan = plan_holes(
        store, depth, runs, level, judge, all_queries, passage_tokens, max_chunks
    )
    if not plan.holes:
        click.echo(f"no holes: every pooled pair at depth {depth} has a label")
        _print_judged(before, None)
        return
    the_judge = make_judge(chosen, **options)
    note(
        f"judge: {the_judge.labeller}; {len(plan.holes)} holes at depth {depth} ({level} level, "
        f"{len(before.runs)} run{'' if len(before.runs) == 1 else 's'})"
    )
    with JudgeCache() as cache:
        if dry_run:
            max_out = the_judge.describe().get("parameters", {}).get("max_tokens")
            _print_forecast(forecast(store, the_judge, plan, cache), max_out, chosen)
            _print_judged(before, None)
            return
        loop_options = LoopOptions(
            concurrency=concurrency,
            max_cost=max_cost,
            max_calls=max_calls,
            retries=retries,
            timeout=timeout,
        )
        bar = ProgressBar(len(plan.holes), progress)
        stats = backfill(store, the_judge, plan, loop_options, cache, bar)
    _print_summary(stats)
    after = pool_summary(store, depth, runs, level, judge, all_queries)
    _print_judged(before, after)
    _finish(stats, max_cost, max_calls)


def _finish(stats: LoopStats, max_cost: float | None, max_calls: int | None) -> None:
    """Say how the run ended; a stop that left work undone exits non-zero."""
    left = stats.outcomes["not_attempted"]
    if stats.fatal is not None:
        raise stats.fatal
    if stats.stopped == "interrupted":
        note(f"interrupted: {left} pairs left; run the same command again to resume")
        raise SystemExit(130)
    if stats.stopped in ("max-cost", "max-calls"):
        cap = (
            f"--max-cost ${max_cost}" if stats.stopped == "max-cost" else f"--max-calls {max_calls}"
        )
        raise BudgetExceededError(
            f"stopped before exceeding {cap}: {left} pairs not attempted",
            "raise the cap, or run the same command again to continue",
        )
    failed = stats.outcomes["error"] + stats.outcomes["unparsed"]
    if failed:
        note(f"{failed} pairs are still holes (error or unparsed answer); run again to retry them")
