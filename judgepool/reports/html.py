"""`judgepool report ... --html OUT.html`: the comparison as one self-contained HTML file.

The markdown report's content (verdict, rules, runs, differences, the trust state, groups, label
sources, the command that reproduces it) plus two inline SVG charts (judgepool/reports/svg.py):
the runs' means with intervals, and per candidate and measure the sorted per-query differences.
Nothing is fetched when it is viewed: the CSS is inline, there is no script, and a
Content-Security-Policy of `default-src 'none'` makes the browser refuse any request the file
could make. Every name and number is HTML-escaped. Deterministic, like the markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from judgepool.errors import Param
from judgepool.metrics.verdicts import CompareReport
from judgepool.reports import sentences as t
from judgepool.reports.command_line import command_line
from judgepool.reports.data import query_differences
from judgepool.reports.svg import delta_chart, runs_chart

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       max-width: 1000px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 12px; }
.better { color: #2e7d32; } .worse { color: #c62828; } .unreliable { color: #c62828; }
.refused { color: #c62828; }
pre { background: #f5f5f5; padding: 8px; overflow-x: auto; }
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="n">{escape(c)}</td>' if i in right else f"<td>{escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>\n<tr>{head}</tr>\n{body}\n</table>"


def _p(text: str, cls: str = "note") -> str:
    return f'<p class="{cls}">{escape(text)}</p>'


def _runs(report: CompareReport) -> list[str]:
    cmp = report.comparison
    ev = cmp.evaluation
    names = [str(m) for m in ev.measures]
    flagged = {r.run for r in cmp.refused}
    rows = [
        [
            run + (" (UNRELIABLE)" if run in flagged else ""),
            *(t.mean_cell(ev, run, m, cmp.gate) for m in names),
            str(ev.summaries[run].holes),
        ]
        for run in ev.runs
    ]
    points = {
        (m, run): (ev.summaries[run].mean[m], ev.summaries[run].ci95[m])
        for m in names
        for run in ev.runs
    }
    return [
        "<h2>Runs</h2>",
        _table(["run", *names, "holes"], rows, range(1, len(names) + 2)),
        _p(f"{t.averaged(ev)}; {t.intervals_note(ev)}"),
        runs_chart(names, ev.runs, points),
    ]


def _deltas(report: CompareReport) -> list[str]:
    cmp = report.comparison
    if not cmp.deltas:
        return []
    resamples, alpha = cmp.evaluation.resamples, cmp.alpha
    rows = [
        [
            d.candidate,
            d.measure,
            str(d.n),
            t.signed(d.delta),
            t.interval(d.ci95, True),
            t.p_value(d.p_holm, resamples, d.p, alpha),
            t.significance(d) + (" UNRELIABLE" if d.unreliable else ""),
        ]
        for d in cmp.deltas
    ]
    headers = ["candidate", "measure", "n", "delta", "95% CI", "p(Holm)", "significant"]
    out = [
        "<h2>Differences</h2>",
        _table(headers, rows, (2, 3, 5)),
        _p(t.deltas_note(report)),
        "<h2>Per-query differences</h2>",
    ]
    for d in cmp.deltas:
        title = f"{d.candidate} - {cmp.baseline}, {d.measure}, per query"
        out.append(delta_chart(title, query_differences(cmp, d.candidate, d.measure)))
    return out


def _trust(report: CompareReport) -> list[str]:
    """The trust state (reports/trust_text.py), as the markdown report has it."""
    from judgepool.reports.trust_text import trust_section

    found = trust_section(report)
    if found is None:
        return []
    out = ["<h2>Can I trust the judge?</h2>"]
    out += [f'<p class="refused"><strong>{escape(line)}</strong></p>' for line in found.fooled]
    out.append(_p(found.summary))
    if found.command is not None:
        out.append(f"<pre>{escape(found.command)}</pre>")
    if found.rows:
        out.append(_table(found.headers, found.rows, (4,)))
    out += [_p(note) for note in found.notes]
    return out


def _groups(report: CompareReport) -> list[str]:
    groups = report.groups
    if groups is None:
        return []
    resamples, alpha = report.comparison.evaluation.resamples, report.comparison.alpha
    rows = [
        [
            d.group,
            d.candidate,
            d.measure,
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
    counts = ", ".join(f"{g} {n}" for g, n in groups.queries.items())
    body = _table(headers, rows, (3, 4, 6)) if rows else _p("no difference computed (refused)")
    return [
        "<h2>By group</h2>",
        _p(f"queries per group: {counts}"),
        body,
        _p(t.groups_note(report)),
    ]


def to_html(report: CompareReport, name: str = "report.html") -> str:
    """The HTML report (module docstring); `name` is the file name the reproducing command
    writes."""
    cmp = report.comparison
    words, reasons = t.headline(report)
    cls = {"better": "better", "worse": "worse", "refused": "refused"}.get(words, "")
    cands = ", ".join(cmp.candidates)
    title = f"judgepool compare: {words} ({cands} against baseline {cmp.baseline})"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f'<h1 class="{cls}">{escape(title)}</h1>',
        "<ul>" + "".join(f"<li>{escape(r)}</li>" for r in reasons) + "</ul>",
    ]
    rules = t.rules_line(report)
    if rules is not None:
        out.append(f"<p><strong>{escape(rules)}</strong></p>")
    out += [
        _p(t.settings(cmp.evaluation), "settings"),
        *_runs(report),
        *_deltas(report),
        *_trust(report),
        *_groups(report),
        "<h2>Labels</h2>",
        _p(t.sources(report), "sources"),
        "<h2>Reproduce</h2>",
        f"<pre>{escape(command_line(report.call('report'), Param('html', name)))}</pre>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)
