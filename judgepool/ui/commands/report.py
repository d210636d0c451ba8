"""`judgepool report BASELINE CANDIDATE... --html OUT.html [--markdown OUT.md]`: the comparison
as files a CI job keeps (judgepool/reports/html.py, judgepool/reports/markdown.py).

It takes compare's options and computes the same comparison (api/report.py); the files are
written (atomically, never over the database, a DuckDB file, a folder or a link) whatever the
verdict, a refusal included, then it exits as `compare` would: 3 refused by the gate, 4 a
--fail-on rule broken, 0 otherwise.
"""

from __future__ import annotations

from pathlib import Path

import click

from judgepool.api.store import Store, holding
from judgepool.defaults import Level
from judgepool.ui.commands.comparing import by_option, fail_on_option
from judgepool.ui.commands.evaluate import force_option, gate_option
from judgepool.ui.commands.measuring import Measuring, measure_options
from judgepool.ui.format import note
from judgepool.ui.options import chosen_level, judge_option, later_level_option
from judgepool.ui.working import working

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
@later_level_option
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
    level: Level | None,
    labeller: str | None,
    measuring: Measuring,
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
    from judgepool.api.compare import CompareSpec
    from judgepool.api.report import write_report

    with holding(store):  # one open of the file for the default level and the figures
        spec = measuring.spec(
            CompareSpec,
            level=chosen_level(store, level),
            labeller=labeller,
            gate=gate,
            force=force,
        )
        with working(f"building the report: comparison ({spec.resamples:,} resamples) and charts"):
            done = write_report(
                store,
                baseline,
                candidates,
                spec,
                html=html,
                markdown=markdown,
                fail_on=fail_on,
                by=by,
            )
    words = "; ".join(f"{v.candidate} {v.word}" for v in done.comparison.report.verdicts)
    if done.html is not None:
        note(f"{done.html}: HTML report written ({words})")
    if done.markdown is not None:
        note(f"{done.markdown}: markdown report written ({words})")
    done.comparison.raise_for_rules()
