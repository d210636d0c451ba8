"""`judgepool report BASELINE CANDIDATE... --html OUT.html [--markdown OUT.md]`: the comparison
as files a CI job keeps (judgepool/reports/html.py, judgepool/reports/markdown.py).

It takes compare's options and computes the same comparison; the files are written (atomically,
never over the database, a DuckDB file, a folder or a link: pooling/io/outfile.py) whatever the
verdict, a refusal included, then it exits as `compare` would: 3 refused by the gate, 4 a
--fail-on rule broken, 0 otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from judgepool.errors import Call
from judgepool.pooling.store.connection import Store
from judgepool.ui.commands.comparing import by_option, fail_on_option
from judgepool.ui.commands.evaluate import force_option, gate_option, measure_options
from judgepool.ui.format import note
from judgepool.ui.options import judge_option, level_option

_OUT = click.Path(path_type=Path)


@click.command("report")
@click.argument("baseline")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE...")
@click.option(
    "--html",
    "html",
    type=_OUT,
    default=None,
    metavar="OUT.html",
    help="Write the report as one self-contained HTML file (inline CSS and SVG "
    "charts, nothing fetched when viewed).",
)
@click.option(
    "--markdown",
    "markdown",
    type=_OUT,
    default=None,
    metavar="OUT.md",
    help="Write the markdown report (what compare --format markdown prints).",
)
@level_option
@judge_option
@measure_options(None)
@gate_option
@force_option
@fail_on_option
@by_option
@click.pass_obj
def report(
    store: Store,
    baseline: str,
    candidates: tuple[str, ...],
    html: Path | None,
    markdown: Path | None,
    level: str,
    labeller: str | None,
    k: int,
    rel: int,
    key_rel: int,
    measures: tuple[str, ...],
    resamples: int,
    seed: int | None,
    average: str,
    gate: float,
    force: bool,
    fail_on: tuple[str, ...],
    by: str | None,
) -> None:
    """Write the comparison of CANDIDATE runs with BASELINE as an HTML and/or markdown file.

    The same figures as `judgepool compare` with the same options, plus (HTML) a chart of the
    runs' means and one of the per-query differences per candidate and measure. Exit codes as
    compare's, after the files are written.
    """
    from judgepool.errors import UsageError
    from judgepool.metrics.bootstrap import DEFAULT_SEED
    from judgepool.metrics.verdicts import run_compare
    from judgepool.pooling.io.outfile import check_target, write_atomic

    if html is None and markdown is None:
        raise UsageError("nothing to write", "give --html OUT.html and/or --markdown OUT.md")
    if html is not None and markdown is not None and html.resolve() == markdown.resolve():
        raise UsageError(f"--html and --markdown both name {html}", "give them two files")

    def writer(option: str) -> Callable[[str | None], Call]:
        """The command that writes the report to a file (None: markdown to standard output)."""
        runs = (baseline, tuple(candidates))
        return lambda path: (
            Call.of("compare", *runs, format="markdown")
            if path is None
            else Call.of("report", *runs, **{option: path})
        )

    targets = [(html, "html", "report.html"), (markdown, "markdown", "report.md")]
    for path, option, example in targets:  # refused before anything is computed
        if path is not None:
            check_target(path, [store.path], writer(option), example)
    found = run_compare(
        store,
        baseline,
        candidates,
        fail_on=fail_on,
        by=by,
        level=level,
        labeller=labeller,
        k=k,
        rel=rel,
        key_rel=key_rel,
        measures=measures or None,
        resamples=resamples,
        seed=DEFAULT_SEED if seed is None else seed,
        gate=gate,
        force=force,
        average=average,
    )
    words = "; ".join(f"{v.candidate} {v.word}" for v in found.verdicts)
    if html is not None:
        from judgepool.reports.html import to_html

        text = to_html(found, html.name)
        write_atomic(html, text.encode("utf-8"), [store.path], writer("html"), "report.html")
        note(f"{html}: HTML report written ({words})")
    if markdown is not None:
        from judgepool.reports.markdown import to_markdown

        write_atomic(
            markdown,
            to_markdown(found).encode("utf-8"),
            [store.path],
            writer("markdown"),
            "report.md",
        )
        note(f"{markdown}: markdown report written ({words})")
    error = found.error()
    if error is not None:
        raise error
