"""`judgepool calibrate` and `judgepool audit sample|status`: check a judge against people.

The work is the services' (judgepool/api/calibrate.py and judgepool/api/audit.py, which
`jp.Database` calls too); this module turns options into calls and prints the reports
(ui/commands/trust_report.py). Listings go to stdout (TSV or JSONL, for a person or a labelling
tool); remarks go to stderr.
"""

from __future__ import annotations

import click

from judgepool.api.options import JUDGE_DEFAULTS
from judgepool.api.store import Store
from judgepool.defaults import CALIBRATION_SAMPLE, DESIGN, DESIGNS, DRAW_SEED, Design, Level
from judgepool.ui.commands.judge_checks import canary_options
from judgepool.ui.format import note
from judgepool.ui.options import depth_option, judge_option, level_option, runs_option


@click.command("calibrate")
@click.option(
    "--model",
    default=None,
    metavar="MODEL",
    help="The judge: a litellm model string, or offline [default: offline when no "
    "provider key is set].",
)
@click.option("--api-base", default=None, metavar="URL", help="An OpenAI-compatible server.")
@click.option(
    "--sample",
    "sample",
    type=click.IntRange(min=1),
    default=CALIBRATION_SAMPLE,
    show_default=True,
    help="Pairs to re-judge, split evenly between the human grades.",
)
@click.option("--seed", type=int, default=DRAW_SEED, show_default=True, help="Seed of the sample.")
@depth_option
@level_option
@click.option("--dry-run", is_flag=True, help="Show the sample, cache hits and cost; no call.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    default=None,
    metavar="USD",
    help="Stop before spending more than this.",
)
@click.option(
    "--max-calls",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Stop before sending more than N requests.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 512),
    default=JUDGE_DEFAULTS.concurrency,
    show_default=True,
    help="Calls in flight at most.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=JUDGE_DEFAULTS.timeout,
    show_default=True,
    help="Seconds per call.",
)
@click.option(
    "--template", default=None, metavar="NAME|FILE", help="Prompt template [relevance-v1]."
)
@canary_options
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress: a bar on a terminal, a line every 5 s in a log [default: both].",
)
@click.pass_obj
def calibrate(
    store: Store,
    model: str | None,
    api_base: str | None,
    sample: int,
    seed: int,
    depth: int,
    level: Level,
    dry_run: bool,
    max_cost: float | None,
    max_calls: int | None,
    concurrency: int,
    timeout: float,
    template: str | None,
    canaries: int | None,
    no_canaries: bool,
    canary_threshold: float,
    progress: bool | None,
) -> None:
    """Re-judge a seeded sample of pooled pairs that people labelled, and report the agreement.

    The sample is stratified by human grade (SAMPLE split evenly between grades 0-3); the pairs
    go through the same cache, claims, limits and provenance as `judgepool judge`, and the
    answers are stored as calibration labels, which never count as labels. Reported: exact
    agreement, Cohen's kappa (4 levels, and binary at grade >= 1, 2, 3), quadratic-weighted
    kappa, Krippendorff's alpha (ordinal), the confusion matrix, hit rate per grade, leniency,
    parse failures and cost, as sampled and re-weighted to the pool's grade mix. Then, as in
    `judgepool judge`, canaries (planted pairs of true grade 0; --canaries N, --no-canaries):
    their rate graded >= 2 per kind, recorded so that a judge fooled here is marked in every
    report that uses its labels. Exit codes as `judgepool judge` (0 done, 4 some pairs failed,
    5 none graded, 6 a cap stopped it).
    """
    from judgepool.api.calibrate import calibrate as run
    from judgepool.api.options import JudgeOptions
    from judgepool.api.progress import Progress
    from judgepool.ui.commands.judge_checks import canaries_per_query
    from judgepool.ui.commands.trust_report import print_calibration

    options = JudgeOptions(
        model=model,
        api_base=api_base,
        depth=depth,
        level=level,
        max_cost=max_cost,
        max_calls=max_calls,
        concurrency=concurrency,
        timeout=timeout,
        template=template,
        canaries=canaries_per_query(canaries, no_canaries),
        canary_threshold=canary_threshold,
    )
    report = run(
        store, options, sample=sample, seed=seed, dry_run=dry_run, progress=Progress(progress)
    )
    print_calibration(report)
    if report.problem is not None:
        raise report.problem


@click.group("audit")
def audit() -> None:
    """Audit the judge: draw queries at random for a person to label, follow the progress.

    \b
      judgepool audit sample --queries 15 --seed 1            draw (and record) the sample
      judgepool audit sample --list --format tsv > todo.tsv   what a person must label
      judgepool ingest qrels labels.txt --labeller ana        their labels back (or the
                                                              dashboard's Audit queue)
      judgepool audit status                                  queries audited, pairs left
    Once two or more sampled queries are fully audited, `compare` and `eval` show a
    judge-corrected interval beside the plain one.
    """


@audit.command("sample")
@click.option(
    "--queries",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Queries to draw at random from the evaluation set (10-20 is usual); "
    "optional with --list when a sample exists.",
)
@click.option(
    "--seed",
    type=int,
    default=DRAW_SEED,
    show_default=True,
    help="Seed of the draw; the same seed with a larger N extends it.",
)
@depth_option
@runs_option
@level_option
@judge_option
@click.option(
    "--design",
    type=click.Choice(list(DESIGNS)),
    default=DESIGN,
    show_default=True,
    help="uniform: every query equally likely; weighted: queries where the judge's labels are "
    "least certain more likely, each weighted by its inclusion probability (covers with "
    "fewer audited queries when a judge's errors sit in a few queries).",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Draw a new sample although one with another seed or design exists.",
)
@click.option(
    "--list",
    "listing",
    is_flag=True,
    help="Print the pairs still to label (query, passage) on stdout.",
)
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="With --list: every pair of the sample, labelled ones too.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tsv", "jsonl"]),
    default="tsv",
    show_default=True,
    help="With --list: the listing's format.",
)
@click.pass_obj
def audit_sample(
    store: Store,
    queries: int | None,
    seed: int,
    depth: int,
    runs: tuple[str, ...],
    level: Level,
    labeller: str | None,
    design: Design,
    replace: bool,
    listing: bool,
    everything: bool,
    fmt: str,
) -> None:
    """Draw N queries at random for a person to audit, and list what they must label.

    The draw is recorded with its design, seed and inclusion probabilities (N / the evaluation
    set, or each query's own with --design weighted). What a person labels for a sampled query:
    every pair of it that a judge (--judge, or any) labelled, since nDCG's ideal ranking and the
    recall denominators read them all; the pairs a run (of --run, or any) ranks in its top DEPTH
    come first. The listing hides the judge's grades (a person grades blind). In TSV, tab,
    newline, carriage return and backslash in a text are written as \\t, \\n, \\r and \\\\.
    """
    from judgepool.api import audit as service
    from judgepool.ui.commands.trust_report import print_drawn, print_listing

    if queries is not None:
        drawn = service.sample(
            store,
            queries,
            seed=seed,
            depth=depth,
            runs=runs,
            level=level,
            labeller=labeller,
            replace=replace,
            design=design,
        )
        print_drawn(store, drawn, to_stderr=listing)
    elif not listing:
        raise click.UsageError("give --queries N (or --list to list the sample in use)")
    if listing:
        print_listing(service.pairs(store, level=level, everything=everything), fmt)


@audit.command("status")
@level_option
@click.pass_obj
def audit_status(store: Store, level: Level) -> None:
    """Progress of the audit sample: queries fully audited, pairs labelled and left."""
    from judgepool.api.audit import status
    from judgepool.ui.commands.trust_report import print_status

    found = status(store, level=level)
    print_status(found)
    if found.audited < 2:
        note("a judge-corrected interval needs at least 2 fully audited queries")
