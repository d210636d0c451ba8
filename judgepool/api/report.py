"""The report verb: a comparison written as a self-contained HTML file and/or a markdown file
(judgepool/reports/html.py, markdown.py), files a CI job keeps.

The targets are checked before anything is computed, and each file is written atomically, never
over the database, a DuckDB file, a folder or a link (pooling/io/outfile.py). The files are
written whatever the verdict, a refusal by the gate included: the result's comparison says it
(`exit_code`, `raise_for_rules()`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgepool.api.compare import compare
from judgepool.api.results import Comparison
from judgepool.api.store import Store
from judgepool.errors import Call, Param, UsageError, remedy
from judgepool.metrics.regression import Rule
from judgepool.metrics.spec import CompareSpec
from judgepool.pooling.io.outfile import check_target, write_atomic

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True)
class ReportFiles:
    """The comparison a report shows and the files it was written to."""

    comparison: Comparison
    html: Path | None
    markdown: Path | None


def write_report(
    store: Store,
    baseline: str,
    candidates: Sequence[str],
    spec: CompareSpec | None = None,
    *,
    html: str | os.PathLike[str] | None = None,
    markdown: str | os.PathLike[str] | None = None,
    fail_on: str | Rule | Sequence[str | Rule] | None = None,
    by: str | None = None,
) -> ReportFiles:
    """Compare `candidates` with `baseline` as `compare` does and write the report to `html`
    and/or `markdown`."""
    if html is None and markdown is None:
        raise UsageError(
            "nothing to write",
            remedy("give {} and/or {}", Param("html", "OUT.html"), Param("markdown", "OUT.md")),
        )
    html_path = None if html is None else Path(html)
    md_path = None if markdown is None else Path(markdown)
    if html_path is not None and md_path is not None and html_path.resolve() == md_path.resolve():
        raise UsageError(
            remedy("{} and {} both name ", Param("html", None), Param("markdown", None))
            + str(html),
            "give them two files",
            value=str(html),
        )

    def writer(option: str) -> Callable[[str | None], Call]:
        """The call that writes the report to a file (None: markdown to standard output)."""
        runs = (baseline, tuple(candidates))
        return lambda path: (
            Call.of("compare", *runs, format="markdown")
            if path is None
            else Call.of("report", *runs, **{option: path})
        )

    targets = [(html_path, "html", "report.html"), (md_path, "markdown", "report.md")]
    for path, option, example in targets:  # refused before anything is computed
        if path is not None:
            check_target(path, [store.path], writer(option), example)
    found = compare(store, baseline, candidates, spec, fail_on=fail_on, by=by, refuse=False)
    if html_path is not None:
        text = found.to_html(html_path.name).encode("utf-8")
        write_atomic(html_path, text, [store.path], writer("html"), "report.html")
    if md_path is not None:
        text = found.to_markdown().encode("utf-8")
        write_atomic(md_path, text, [store.path], writer("markdown"), "report.md")
    return ReportFiles(found, html_path, md_path)
