"""The Compare page's tables: each run's own means beside the paired differences (ranx-style).

`means_table` has one row per compared run: each measure's mean with its 95% interval and a
marker when the run is significantly better (▲) or worse (▼) than the baseline by the same
Holm-corrected test as the differences table; judged@k against the gate; holes in its top k.
`bounds_table`, beside it, the bounds the CLI prints for a run with holes (every hole counted
grade 0, as now, and the top grade, the lower first): in one table with the means they were cut
off at 1440 px (issue 24). `deltas_table` has one row per candidate x measure. Both are plain
DataFrames (text shown as text), built from `metrics.compare.Comparison` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgepool.metrics.gate import fmt_judged
from judgepool.reports.sentences import in_order, p_value

if TYPE_CHECKING:
    import pandas as pd

    from judgepool.metrics.compare import ComparisonFigures, Delta

UNRELIABLE = "UNRELIABLE"
BETTER, WORSE = "▲", "▼"
PROVISIONAL = "provisional: labels being written"


def verdict(d: Delta) -> str:
    """better / worse / no significant difference (Holm-corrected)."""
    if d.delta is None or d.p_holm is None:
        return "not tested (no query to average)"
    if not d.significant:
        return "no significant difference"
    return "better" if d.delta > 0 else "worse"


def marker(d: Delta | None) -> str:
    """▲ significantly better than the baseline, ▼ worse, nothing otherwise."""
    if d is None or d.delta is None or not d.significant:
        return ""
    return BETTER if d.delta > 0 else WORSE


def effectiveness(cmp: ComparisonFigures) -> list[str]:
    """The measures with a quality to compare (Judged@k is the gate's input)."""
    return [str(m) for m in cmp.evaluation.measures if m.kind != "Judged"]


def fmt_mean(mean: float | None, ci: tuple[float, float] | None, mark: str = "") -> str:
    """`0.506 [0.452, 0.561] ▲`; an en dash when the mean does not exist."""
    if mean is None:
        return "–"
    text = f"{mean:.3f}" if ci is None else f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
    return f"{text} {mark}" if mark else text


def fmt_bounds(bounds: tuple[float | None, float | None] | None) -> str:
    """`0.412 .. 0.655` (holes as grade 0 and as the top grade, the lower first); `no hole` for
    an exact mean."""
    if bounds is None:
        return "no hole"
    low, high = in_order(bounds)
    return f"{'–' if low is None else f'{low:.3f}'} .. {'–' if high is None else f'{high:.3f}'}"


def means_table(cmp: ComparisonFigures) -> pd.DataFrame:
    """One row per compared run, the baseline first (see the module docstring)."""
    import pandas as pd

    ev = cmp.evaluation
    names = effectiveness(cmp)
    tested = {(d.candidate, d.measure): d for d in cmp.deltas}
    rows = []
    for run in (cmp.baseline, *cmp.candidates):
        s = ev.summaries[run]
        role = "baseline" if run == cmp.baseline else "candidate"
        row: dict[str, Any] = {"run": run, "role": role}
        for m in names:
            row[m] = fmt_mean(s.mean[m], s.ci95[m], marker(tested.get((run, m))))
        row[f"Judged@{ev.k}"] = fmt_judged(s.judged_exact, cmp.gate)
        row[f"holes@{ev.k}"] = s.holes
        rows.append(row)
    return pd.DataFrame(rows)


def bounds_table(cmp: ComparisonFigures) -> pd.DataFrame:
    """One row per compared run, the baseline first: each thresholded measure's bounds."""
    import pandas as pd

    ev = cmp.evaluation
    with_bounds = [str(m) for m in ev.measures if m.threshold is not None]
    rows = []
    for run in (cmp.baseline, *cmp.candidates):
        s = ev.summaries[run]
        row: dict[str, Any] = {"run": run}
        for m in with_bounds:
            row[f"{m} bounds"] = fmt_bounds(None if s.bounds is None else s.bounds.get(m))
        rows.append(row)
    return pd.DataFrame(rows)


def means_caption(cmp: ComparisonFigures) -> str:
    """How to read the means table."""
    ev = cmp.evaluation
    return (
        f"Each run's own mean over the queries the measure averages, with its 95% interval "
        f"(bootstrap over queries, {ev.resamples:,} resamples). {BETTER} / {WORSE}: "
        f"significantly better / worse than the baseline {cmp.baseline} (the test of the "
        f"differences table, Holm-corrected). Bounds: the mean with every hole in the run's top "
        f"{ev.k} counted grade 0 (as now) and counted grade {ev.top_grade}, the lower first; "
        "counting holes relevant can lower a mean (it raises the ideal ranking). A run whose "
        "bounds are far apart can move a lot once its holes are labelled."
    )


def deltas_table(cmp: ComparisonFigures, provisional: bool = False) -> pd.DataFrame:
    """One row per candidate x measure; verdicts marked provisional while labels are written."""
    import pandas as pd

    rows = []
    for d in cmp.deltas:
        said = verdict(d)
        row: dict[str, Any] = {
            "candidate": d.candidate,
            "measure": d.measure,
            "queries": d.n,
            "difference": None if d.delta is None else round(d.delta, 4),
            "95% interval": "–" if d.ci95 is None else f"[{d.ci95[0]:+.4f}, {d.ci95[1]:+.4f}]",
            "p": p_value(d.p, cmp.evaluation.resamples),
            "p (Holm)": p_value(d.p_holm, cmp.evaluation.resamples, d.p, cmp.alpha),
            "verdict": f"{said} ({PROVISIONAL})" if provisional else said,
        }
        if cmp.unreliable:  # forced past the gate: nothing in this table is reliable
            why = "a run under the gate" if d.unreliable else "forced comparison"
            row["reliability"] = f"{UNRELIABLE} ({why})"
        rows.append(row)
    return pd.DataFrame(rows)


def holm_note(candidates: int, measures: int) -> str:
    """Why the verdict of one candidate depends on which others are picked."""
    tests = candidates * measures
    return (
        f"Holm's correction is over every candidate × measure on this page ({candidates} × "
        f"{measures} = {tests} test{'s' * (tests != 1)}): adding or removing a candidate changes "
        "the corrected p of the others, and can flip their verdicts. Compare the runs you mean "
        "to decide on, and share the link of exactly that comparison."
    )
