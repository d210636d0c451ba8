"""The sentences and figures the markdown and HTML reports share, as plain text: the verdict
line, the settings line, the runs' cells, the label sources, the notes under the tables.

Numbers print with fixed decimals (three, p-values four, judged@k as the gate rule prints it),
so a report made twice from the same database and seed is the same byte for byte.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from judgepool.errors import Param, counted
from judgepool.metrics.gate import describe, fmt_judged
from judgepool.reports.command_line import cli_words, command_line

if TYPE_CHECKING:
    from judgepool.metrics.compare import Delta
    from judgepool.metrics.evaluate import EvaluationFigures
    from judgepool.metrics.groups import GroupDelta
    from judgepool.metrics.verdicts import CompareReport, Verdict

DASH = "–"


def num(value: float | None, digits: int = 3) -> str:
    """A number, or an en dash when it does not exist."""
    return DASH if value is None else f"{value:.{digits}f}"


def signed(value: float | None) -> str:
    """A difference, with its sign."""
    return DASH if value is None else f"{value:+.3f}"


def interval(ci: tuple[float, float] | None, sign: bool = False) -> str:
    """`[lo, hi]`."""
    if ci is None:
        return DASH
    f = signed if sign else num
    return f"[{f(ci[0])}, {f(ci[1])}]"


def mean_cell(ev: EvaluationFigures, run: str, measure: str, gate: float) -> str:
    """`0.712 [0.601, 0.810]`; Judged@k as the gate reads it."""
    s = ev.summaries[run]
    if measure == f"Judged@{ev.k}":
        return fmt_judged(s.judged_exact, gate)
    mean = s.mean[measure]
    return DASH if mean is None else f"{num(mean)} {interval(s.ci95[measure])}"


def mark(d: Delta | GroupDelta) -> str:
    """The significance mark of a difference: ▲ better, ▼ worse, nothing."""
    if not d.significant or d.delta is None:
        return ""
    return "▲ better" if d.delta > 0 else "▼ worse"


def significance(d: Delta | GroupDelta) -> str:
    """The "significant" cell: ▲ better, ▼ worse, `no`, or an en dash when nothing was tested
    (a column of blanks reads as missing data)."""
    if d.delta is None or d.p_holm is None:
        return DASH
    return mark(d) or "no"


def p_value(
    p: float | None, resamples: int, raw: float | None = None, alpha: float | None = None
) -> str:
    """`0.0312`; `< 0.0001` when the test's own p (`raw`, the unadjusted p of which `p` is the
    Holm-adjusted value; `p` itself when not given) is the floor of `resamples` sign flips,
    1 / (resamples + 1), reached when no flip was as extreme: the p then only bounds the true
    one from above, so it is said as a bound (rounded up), never as a measured value. Given the
    `alpha` the p is held to, a p just under it keeps the digits that show it (`0.04998`, not
    `0.0500` beside "significant: p < 0.05")."""
    if p is None or math.isnan(p):
        return DASH
    test = p if raw is None else raw
    if test < 1.0 / max(1, resamples):
        return f"< {math.ceil(p * 10_000 - 1e-9) / 10_000:.4f}"
    for digits in range(4, 10):
        text = f"{p:.{digits}f}"
        if alpha is None or (float(text) < alpha) == (p < alpha):
            return text
    return f"{p:.10f}"


def in_order(pair: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
    """Two figures, the lower first: a mean with every hole counted grade 0 can be above the one
    with every hole counted the top grade (holes counted relevant raise nDCG's ideal ranking and
    recall's denominator), and `0.764 .. 0.757` reads as a mistake."""
    low, high = pair
    if low is not None and high is not None and high < low:
        return high, low
    return low, high


def _difference(d: Delta, resamples: int, alpha: float) -> str:
    p = p_value(d.p_holm, resamples, d.p, alpha)
    return f"{d.measure} ({signed(d.delta)} {interval(d.ci95, True)}, p(Holm) {p})"


def verdict_reason(v: Verdict, baseline: str, resamples: int, alpha: float) -> str:
    """Why a candidate got its verdict, in one clause."""
    if v.word == "no significant difference":
        return f"{v.candidate}: no significant difference from {baseline}"
    parts = []
    if v.better:
        parts.append("better on " + "; ".join(_difference(d, resamples, alpha) for d in v.better))
    if v.worse:
        parts.append("worse on " + "; ".join(_difference(d, resamples, alpha) for d in v.worse))
    return f"{v.candidate} is significantly " + ", ".join(parts)


def headline(report: CompareReport) -> tuple[str, list[str]]:
    """The verdict in a few words, and the reasons (one per candidate, or the refusal)."""
    cmp = report.comparison
    ev = cmp.evaluation
    if cmp.refused and not cmp.force:
        listing = "; ".join(describe(r, ev.k, cmp.gate) for r in cmp.refused)
        why = [
            f"{counted(len(cmp.refused), 'run')} under the judged@{ev.k} gate of {cmp.gate:g} "
            f"({listing})"
        ]
        if cmp.command is not None:
            why.append(f"fill the holes with: {command_line(cmp.command)}")
        return "refused", why
    verdicts = report.verdicts
    if len(verdicts) == 1:
        words = verdicts[0].word
    else:
        words = "; ".join(f"{v.candidate}: {v.word}" for v in verdicts)
    if cmp.unreliable:
        words = f"UNRELIABLE {words}"
    reasons = [verdict_reason(v, cmp.baseline, ev.resamples, cmp.alpha) for v in verdicts]
    if cmp.unreliable:
        listing = "; ".join(describe(r, ev.k, cmp.gate) for r in cmp.refused)
        reasons.append(f"forced past the judged@{ev.k} gate of {cmp.gate:g}: {listing}")
    return words, reasons


def rules_line(report: CompareReport) -> str | None:
    """`--fail-on regression: failed (exit code 4)`, or None without rules."""
    check = report.rules
    if check is None:
        return None
    rules = cli_words(Param("fail_on", tuple(str(r) for r in check.rules)))
    if check.refused:
        return f"{rules}: not decided: the gate refused the comparison (exit code 3)"
    if check.unreliable:
        state = ("would fail: " + ", ".join(check.failed_rules)) if check.breaches else "would hold"
        return f"{rules}: not decided on UNRELIABLE figures ({state}; exit code 3)"
    if check.breaches:
        return f"{rules}: failed ({', '.join(check.failed_rules)}; exit code 4)"
    return f"{rules}: every rule held (exit code 0)"


def settings(ev: EvaluationFigures) -> str:
    """The level, cutoff, labels and evaluation set, as every report states them."""
    who = "any judge" if ev.labeller is None else f"judge {ev.labeller}"
    return (
        f"{ev.level} level, k={ev.k}, human labels + {who}; evaluation set: {len(ev.qids)} "
        "queries with at least one effective label (a run that misses one scores 0 on it)"
    )


def averaged(ev: EvaluationFigures) -> str:
    """How many queries each mean is over."""
    parts = []
    for m in ev.measures:
        left = len(ev.qids) - ev.n(str(m))
        why = f" ({left} left out: no doc of grade >= {m.threshold})" if left else ""
        parts.append(f"{m} {ev.n(str(m))}{why}")
    how = " (as trec_eval -c)" if ev.average == "trec_eval" else ""
    return f"queries averaged{how}: " + ", ".join(parts)


def intervals_note(ev: EvaluationFigures) -> str:
    """How the intervals were made."""
    return (
        f"95% intervals: percentile bootstrap over the averaged queries, {ev.resamples} "
        f"resamples, seed {ev.seed}"
    )


def deltas_note(report: CompareReport) -> str:
    """What the differences table shows."""
    cmp = report.comparison
    tests = sum(1 for d in cmp.deltas if d.p is not None)
    return (
        "delta = candidate - baseline over the same queries; 95% CI: paired bootstrap; p(Holm): "
        f"paired randomisation test ({cmp.evaluation.resamples} sign flips; < x: none was as "
        f"extreme, the p is under x), Holm-adjusted over {tests} comparisons; ▲/▼ significant: "
        f"p(Holm) < {cmp.alpha:g}, no: not significant"
    )


def groups_note(report: CompareReport) -> str:
    """What the groups table shows, and the marker."""
    g = report.groups
    tests = 0 if g is None else g.tests
    ungrouped = "" if g is None or not g.ungrouped else f"; {g.ungrouped} queries are in no group"
    return (
        f"per group: the queries of the evaluation set in the group; p(Holm) over the {tests} "
        "group x candidate x measure comparisons; too small: half the group's 95% interval is "
        "at least the overall difference (or it has fewer than 2 queries), so it cannot tell an "
        f"effect of that size from none: do not conclude on it{ungrouped}"
    )


def sources(report: CompareReport) -> str:
    """`120 human (qrels.txt), 30 judge (offline:...), 4 holes`, for the runs' top k."""
    ev = report.comparison.evaluation
    total = sum(s.pairs for s in report.sources)
    parts = []
    for s in report.sources:
        if s.source is None:
            parts.append(f"{s.pairs} hole{'s' if s.pairs != 1 else ''} (no label)")
        else:
            parts.append(f"{s.pairs} {s.source} ({s.labeller})")
    return (
        f"labels of the {total} distinct (query, doc) pairs in the compared runs' top {ev.k}: "
        + (", ".join(parts) if parts else "none")
    )
