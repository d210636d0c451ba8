"""`compare --format markdown`: a compact report for a pull-request comment or a CI step summary.

In order: the verdict line (better / worse / mixed / no significant difference / refused, and
why), the --fail-on outcome, the settings; the runs' means with intervals, judged@k and holes;
the differences with their significance marks; the trust state (judges canaries fooled, the
audit's size, each judge-corrected interval and its verdict); the groups (`--by group`); the
labels' sources; the exact command that reproduces the report. Deterministic: the same
database, options and seed give the same bytes. Names (runs, groups, judges) are escaped,
never read as markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgepool.errors import Param
from judgepool.reports import sentences as t
from judgepool.reports.command_line import command_line

if TYPE_CHECKING:
    from judgepool.metrics.verdicts import CompareReport

_SPECIAL = re.compile(r"([\\`*_\[<>|~])")


def esc(text: str) -> str:
    """Text shown as itself in markdown (and in a table cell)."""
    return _SPECIAL.sub(r"\\\1", text)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> str:
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _runs(report: CompareReport) -> str:
    cmp = report.comparison
    ev = cmp.evaluation
    names = [str(m) for m in ev.measures]
    flagged = {r.run for r in cmp.refused}
    rows = [
        [
            esc(run) + (" (UNRELIABLE)" if run in flagged else ""),
            *(t.mean_cell(ev, run, m, cmp.gate) for m in names),
            str(ev.summaries[run].holes),
        ]
        for run in ev.runs
    ]
    return _table(["run", *map(esc, names), "holes"], rows, range(1, len(names) + 2))


def _deltas(report: CompareReport) -> str:
    resamples, alpha = report.comparison.evaluation.resamples, report.comparison.alpha
    rows = [
        [
            esc(d.candidate),
            esc(d.measure),
            str(d.n),
            t.signed(d.delta),
            t.interval(d.ci95, True),
            t.p_value(d.p_holm, resamples, d.p, alpha),
            t.significance(d) + (" UNRELIABLE" if d.unreliable else ""),
        ]
        for d in report.comparison.deltas
    ]
    headers = ["candidate", "measure", "n", "delta", "95% CI", "p(Holm)", "significant"]
    return _table(headers, rows, (2, 3, 5))


def _groups(report: CompareReport) -> str:
    groups = report.groups
    if groups is None:
        return ""
    resamples, alpha = report.comparison.evaluation.resamples, report.comparison.alpha
    rows = [
        [
            esc(d.group),
            esc(d.candidate),
            esc(d.measure),
            str(d.n),
            t.signed(d.delta),
            t.interval(d.ci95, True),
            t.p_value(d.p_holm, resamples, d.p, alpha),
            t.significance(d) + (" UNRELIABLE" if d.unreliable else ""),
            "too small" if d.too_small else "",
        ]
        for d in groups.deltas
    ]
    headers = [
        "group",
        "candidate",
        "measure",
        "n",
        "delta",
        "95% CI",
        "p(Holm)",
        "significant",
        "note",
    ]
    counts = ", ".join(f"{esc(g)} {n}" for g, n in groups.queries.items())
    body = _table(headers, rows, (3, 4, 6)) if rows else "no difference computed (refused)"
    return f"#### By group\n\nqueries per group: {counts}\n\n{body}\n\n{t.groups_note(report)}\n"


def _trust(report: CompareReport) -> list[str]:
    """The trust state: judges canaries fooled, the audit, the corrected intervals, verdicts."""
    from judgepool.reports.trust_text import trust_section

    found = trust_section(report)
    if found is None:
        return []
    out = ["#### Can I trust the judge?", ""]
    out += [f"**{esc(line)}**" for line in found.fooled]
    out += ["", esc(found.summary), ""] if found.fooled else [esc(found.summary), ""]
    if found.command is not None:
        out += ["```", found.command, "```", ""]
    if found.rows:
        rows = [[esc(cell) for cell in row] for row in found.rows]
        out += [_table(found.headers, rows, (4,)), ""]
    out += [f"- {esc(note)}" for note in found.notes]
    return [*out, ""] if found.notes else out


def to_markdown(report: CompareReport) -> str:
    """The markdown report of one comparison (module docstring)."""
    cmp = report.comparison
    ev = cmp.evaluation
    words, reasons = t.headline(report)
    base = esc(cmp.baseline)
    cands = ", ".join(esc(c) for c in cmp.candidates)
    out = [f"**judgepool compare: {esc(words)}** ({cands} against baseline {base})", ""]
    out += [f"- {esc(r)}" for r in reasons]
    rules = t.rules_line(report)
    if rules is not None:
        out += ["", f"**{esc(rules)}**"]
    out += [
        "",
        esc(t.settings(ev)),
        "",
        "#### Runs",
        "",
        _runs(report),
        "",
        esc(t.averaged(ev)) + "; " + esc(t.intervals_note(ev)),
        "",
    ]
    if cmp.deltas:
        out += ["#### Differences", "", _deltas(report), "", esc(t.deltas_note(report)), ""]
    out += _trust(report)
    groups = _groups(report)
    if groups:
        out += [groups]
    out += ["#### Labels", "", esc(t.sources(report)), ""]
    again = command_line(report.call(), Param("format", "markdown"))
    out += ["#### Reproduce", "", "```", again, "```", ""]
    return "\n".join(out)
