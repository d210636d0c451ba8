"""`judgepool judge`: fill the holes of a pool with a judge (an LLM via litellm, or offline).

The work lives in judge/ (judge.backfill); this module turns options into calls, and
judge_report.py prints the plan, a dry-run forecast, or a run's summary by status and grade,
judged@k per run before and after, and chooses the exit code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from judgepool.pooling.errors import UsageError
from judgepool.pooling.store import Store
from judgepool.ui.commands.judge_report import finish, print_forecast, print_judged, print_summary
from judgepool.ui.format import note
from judgepool.ui.options import (
    all_queries_option,
    depth_option,
    judge_option,
    level_option,
    runs_option,
)

if TYPE_CHECKING:
    from judgepool.judge.backfill import Plan

_LLM_ONLY = ("api_base", "temperature", "max_tokens", "template")


def _judge_options(model: str, given: dict[str, Any]) -> dict[str, Any]:
    """Constructor options for the chosen judge; LLM options given to the offline judge are an
    error rather than silently ignored."""
    from judgepool.judge.registry import is_offline

    chosen = {k: v for k, v in given.items() if v is not None}
    if is_offline(model):
        wrong = [k for k in chosen if k in _LLM_ONLY]
        if wrong:
            flags = ", ".join("--" + k.replace("_", "-") for k in wrong)
            raise UsageError(
                f"{flags} apply to LLM judges, not to {model}",
                f"leave out {flags}, or choose an LLM with --model (e.g. openai/gpt-4o-mini)",
            )
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
    help="Seconds per call before it counts as a timeout (retried; charged at its worst case "
    "against --max-cost).",
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
    "--query-tokens",
    type=click.IntRange(min=16),
    default=1024,
    show_default=True,
    help="Cut longer queries to this many tokens (flagged query_truncated).",
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
    query_tokens: int,
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
    Keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...); a dry run
    needs none. Run the same command again after an interruption: it pays only for what is
    missing. Exit codes: 0 done, 1 stopped on an error, 4 some holes failed, 5 nothing
    labelled, 6 stopped by a cap, 130 interrupted.
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
        store, depth, runs, level, judge, all_queries, passage_tokens, max_chunks, query_tokens
    )
    if not plan.holes:
        click.echo(f"no holes: every pooled pair at depth {depth} has a label")
        print_judged(before, None)
        return
    the_judge = make_judge(chosen, **options)
    note(
        f"judge: {the_judge.labeller}; {len(plan.holes)} holes at depth {depth} ({level} level, "
        f"{len(before.runs)} run{'' if len(before.runs) == 1 else 's'})"
    )
    with JudgeCache() as cache:
        if dry_run:
            max_out = the_judge.describe().get("parameters", {}).get("max_tokens")
            print_forecast(forecast(store, the_judge, plan, cache), max_out, chosen)
            print_judged(before, None)
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
    print_summary(stats)
    after = pool_summary(store, depth, runs, level, judge, all_queries)
    print_judged(before, after)
    finish(stats, max_cost, max_calls)

