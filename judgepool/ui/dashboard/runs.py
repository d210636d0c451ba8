"""Runs page: every run's measures with 95% intervals, judged@k against the gate, holes at depth.

A Streamlit page script (run by `st.navigation` with `__name__ == "__main__"`); importing it
draws nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.defaults import GATE
from judgepool.errors import JudgepoolError
from judgepool.metrics.gate import fmt_judged, passes
from judgepool.ui.dashboard import data, live
from judgepool.ui.dashboard.charts import means_chart
from judgepool.ui.dashboard.page import render_page
from judgepool.ui.dashboard.view import View, md, safe_version, show_error

if TYPE_CHECKING:
    import pandas as pd

    from judgepool.api.browse import PoolSummary
    from judgepool.metrics.evaluate import EvaluationFigures

OK_COLOUR, UNDER_COLOUR = "#c8e6c9", "#ffcdd2"


def fmt_ci(mean: float | None, ci: tuple[float, float] | None) -> str:
    """`0.506 [0.452, 0.561]`; an en dash when the mean does not exist."""
    if mean is None:
        return "–"
    return f"{mean:.3f}" if ci is None else f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def runs_table(ev: EvaluationFigures, summary: PoolSummary, gate: float = GATE) -> pd.DataFrame:
    """One row per run: each measure's mean and interval, judged@k, gate verdict, holes.

    judged@k and its verdict come from `metrics.gate` (the exact fraction, the one rule), so
    this table, its colours, the warning under it and the Compare page always agree."""
    import pandas as pd

    judged_name = f"Judged@{ev.k}"
    holes = {r.run: r.holes for r in summary.runs}
    rows = []
    for run in ev.runs:
        s = ev.summaries[run]
        row: dict[str, Any] = {"run": run}
        for m in ev.measures:
            if m.kind != "Judged":
                row[str(m)] = fmt_ci(s.mean[str(m)], s.ci95[str(m)])
        row[judged_name] = fmt_judged(s.judged_exact, gate)
        row["gate"] = f"ok (≥ {gate:g})" if passes(s.judged_exact, gate) else f"UNDER {gate:g}"
        row[f"holes@{summary.depth}"] = holes.get(run, 0)
        rows.append(row)
    return pd.DataFrame(rows)


def _colour_gate(row: pd.Series) -> list[str]:
    """Both gate cells of a row coloured by the row's verdict (never by a rounded number)."""
    ok = str(row["gate"]).startswith("ok")
    return [f"background-color: {OK_COLOUR if ok else UNDER_COLOUR}; color: black"] * len(row)


def chart_rows(ev: EvaluationFigures) -> list[dict[str, Any]]:
    """Long rows (run, measure, mean, low, high) of the effectiveness measures with an interval
    (judged@k is in the table, against the gate)."""
    rows = []
    for run in ev.runs:
        s = ev.summaries[run]
        for m in ev.measures:
            if m.kind == "Judged":
                continue
            mean, ci = s.mean[str(m)], s.ci95[str(m)]
            if mean is not None and ci is not None:
                rows.append(
                    {"run": run, "measure": str(m), "mean": mean, "low": ci[0], "high": ci[1]}
                )
    return rows


def averaged_caption(ev: EvaluationFigures) -> str:
    """Which queries each mean is over (every report says so)."""
    parts = [f"{m}: {ev.n(str(m))}" for m in ev.measures]
    return (
        f"Evaluation set: {len(ev.qids)} queries with at least one effective label at the "
        f"{ev.level} level. Queries averaged per measure (those with a doc at its threshold): "
        + ", ".join(parts)
        + f". Intervals: percentile bootstrap over queries, {ev.resamples:,} resamples."
    )


def body(view: View) -> None:
    """The page's figures (refreshed by the fragment)."""
    version = safe_version(view.db)
    if version is None:
        return
    try:
        ev = data.evaluation(view.db, version, view.level, view.labeller, view.k)
        summary = data.pool(view.db, version, view.level, view.labeller, view.depth)
    except JudgepoolError as err:
        show_error(err)
        return
    judged_name = f"Judged@{ev.k}"
    table = runs_table(ev, summary)
    under = [r for r in ev.runs if not passes(ev.summaries[r].judged_exact, GATE)]
    st.subheader(f"Runs — {md(view.label)}")
    st.dataframe(
        table.style.apply(_colour_gate, axis=1, subset=[judged_name, "gate"]),
        hide_index=True,
        key="runs_table",
    )
    st.caption(averaged_caption(ev))
    live.ideal_caption(view, version)
    live.ideal_notes(view, version, ev, "runs")
    for text in ev.warnings:
        st.warning(md(text))
    if under:
        st.warning(
            f"{'1 run is' if len(under) == 1 else f'{len(under)} runs are'} under the "
            f"{judged_name} gate of {GATE:g}: "
            + md(", ".join(under))
            + ". Comparisons with them are refused; the Compare page gives the command that "
            "fills their holes."
        )
    st.caption(
        f"holes@{summary.depth}: pooled pairs in a run's top {summary.depth} with no effective "
        f"label ({summary.holes} in the pool of {summary.pairs} pairs)."
    )
    st.altair_chart(
        means_chart(chart_rows(ev), "Means with 95% intervals", view.label),
        key="runs_chart",
    )


def render() -> None:
    """Draw the page."""
    render_page("Runs", body)


if __name__ == "__main__":
    render()
