"""`judgepool judge`: fill the holes of a pool with a judge (an LLM via litellm, or offline).

The work is the service judgepool/api/judge.py's (`judge`, which `jp.Database.judge` calls too);
this module turns the options into a `JudgeOptions`, and judge_report.py prints what the service
reports: the plan before the run, a dry-run forecast, or a run's summary by status and grade,
judged@k per run before and after, and the exit code.
"""

from __future__ import annotations

from typing import Any

import click

from judgepool.api.options import JUDGE_DEFAULTS, Combine, Effort, JudgeOptions
from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.ui.commands.judge_batch import batch_options, run_batch
from judgepool.ui.commands.judge_checks import canaries_per_query, control_options, split_models
from judgepool.ui.options import (
    all_queries_option,
    depth_option,
    judge_option,
    level_option,
    runs_option,
)


@click.command("judge")
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="MODEL",
    help="litellm model (openai/gpt-4o-mini, anthropic/..., ollama/..., hosted_vllm/...)"
    " or offline[:PATH] [default: offline when no provider key is set]; repeat for a jury.",
)
@click.option(
    "--api-base",
    "api_bases",
    multiple=True,
    metavar="URL",
    help="An OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (once for every --model, "
    "or once per --model in their order, - for none).",
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
    default=JUDGE_DEFAULTS.concurrency,
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
    default=JUDGE_DEFAULTS.timeout,
    show_default=True,
    help="Seconds per call before it counts as a timeout (retried; charged at its worst case "
    "against --max-cost).",
)
@click.option(
    "--retries",
    type=click.IntRange(min=0),
    default=JUDGE_DEFAULTS.retries,
    show_default=True,
    help="Retries per pair after 5xx, timeouts and connection errors.",
)
@click.option(
    "--temperature",
    type=float,
    default=None,
    help="Sampling temperature [0; a reasoning model: 0 if it takes it, else 1].",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Output token cap per call, reasoning included [256; a reasoning model: 8192].",
)
@click.option(
    "--reasoning-effort",
    type=click.Choice(["low", "medium", "high"]),
    default=None,
    help="Reasoning models: the effort asked for (part of the cache key) [the provider's].",
)
@click.option(
    "--passage-tokens",
    type=click.IntRange(min=16),
    default=JUDGE_DEFAULTS.passage_tokens,
    show_default=True,
    help="Cut longer passages to this many tokens (flagged truncated).",
)
@click.option(
    "--query-tokens",
    type=click.IntRange(min=16),
    default=JUDGE_DEFAULTS.query_tokens,
    show_default=True,
    help="Cut longer queries to this many tokens (flagged query_truncated).",
)
@click.option(
    "--max-chunks",
    type=click.IntRange(min=1),
    default=JUDGE_DEFAULTS.max_chunks,
    show_default=True,
    help="--level doc: show at most this many retrieved chunks of a document.",
)
@click.option(
    "--template",
    default=None,
    metavar="NAME|FILE",
    help="Prompt template: a packaged name, or a file (any value with a / or a suffix) "
    "[relevance-v1].",
)
@control_options
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress: a bar on a terminal, a line every 5 s in a log [default: both].",
)
@batch_options
@click.pass_obj
def judge(
    store: Store,
    /,
    models: tuple[str, ...],
    api_bases: tuple[str, ...],
    depth: int,
    runs: tuple[str, ...],
    level: Level,
    labeller: str | None,
    all_queries: bool,
    dry_run: bool,
    concurrency: int,
    max_cost: float | None,
    max_calls: int | None,
    timeout: float,
    retries: int,
    temperature: float | None,
    max_tokens: int | None,
    reasoning_effort: Effort | None,
    passage_tokens: int,
    query_tokens: int,
    max_chunks: int,
    template: str | None,
    combine: Combine,
    num_samples: int,
    canaries: int | None,
    no_canaries: bool,
    canary_threshold: float,
    progress: bool | None,
    **batch: Any,
) -> None:
    """Label the holes of the pool at DEPTH with a judge, cached by content, resumable.

    \b
    Examples:
      judgepool judge --model openai/gpt-4o-mini --depth 10 --dry-run
      judgepool judge --model openai/gpt-4o-mini --depth 10 --max-cost 5
      judgepool judge --model hosted_vllm/NAME --api-base http://127.0.0.1:8000/v1
      judgepool judge --model offline
      judgepool judge --batch --model openai/gpt-4o-mini --depth 10   (half price, within 24 h)
      judgepool judge --batch-collect
      judgepool judge --model openai/gpt-4o-mini --model anthropic/claude-3-5-haiku-latest
      judgepool judge --model openai/gpt-4o-mini --num-samples 3 --combine majority
    Canaries (planted pairs of true grade 0) check each run's judge: --canaries N, --no-canaries.
    Keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...); a dry run
    needs none. Run the same command again after an interruption: it pays only for what is
    missing. Exit codes: 0 done, 1 stopped on an error, 4 some holes failed, 5 nothing
    labelled, 6 stopped by a cap, 130 interrupted.
    """
    options = JudgeOptions(
        **split_models(models, api_bases),
        depth=depth,
        runs=runs,
        level=level,
        labeller=labeller,
        all_queries=all_queries,
        concurrency=concurrency,
        max_cost=max_cost,
        max_calls=max_calls,
        timeout=timeout,
        retries=retries,
        temperature=temperature,
        max_tokens=max_tokens,
        passage_tokens=passage_tokens,
        query_tokens=query_tokens,
        max_chunks=max_chunks,
        template=template,
        reasoning_effort=reasoning_effort,
        combine=combine,
        num_samples=num_samples,
        canaries=canaries_per_query(canaries, no_canaries),
        canary_threshold=canary_threshold,
    )
    if run_batch(store, options, dry_run, progress, **batch):
        return
    from judgepool.api.judge import judge as fill
    from judgepool.ui.commands import judge_report as shown

    if dry_run:
        shown.print_dry_run(fill(store, options, dry_run=True, progress=shown.Planned(progress)))
        return
    shown.print_run(fill(store, options, progress=shown.Planned(progress)))
