"""The Compare page's judge-corrected panel (metrics/corrected.py): each difference's plain
interval beside its judge-corrected one with the verdict, or, before an audit, why there is none,
what to run, and how many audited queries would do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.reports.command_line import command_line
from judgepool.ui.dashboard.view import md

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures


def _interval(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


def corrected_rows(cmp: ComparisonFigures) -> list[dict[str, Any]]:
    """One row per difference: plain and corrected estimates, intervals, audit size, and the
    judge check (robust / judge-dependent; not named `verdict`, the differences table's own
    Holm verdict column)."""
    trust = cmp.corrected
    rows: list[dict[str, Any]] = []
    if trust is None:
        return rows
    for d in cmp.deltas:
        c = trust.deltas.get((d.candidate, d.measure))
        e = None if c is None else c.estimate
        forecast = None if c is None else c.forecast
        rows.append(
            {
                "candidate": d.candidate,
                "measure": d.measure,
                "difference": d.delta,
                "plain 95%": _interval(d.ci95),
                "judge-corrected": None if e is None else e.estimate,
                "corrected 95%": "–" if e is None else _interval(e.ci),
                "audited": "" if e is None else f"{e.audited} of {e.of}",
                "λ": None if e is None else e.lam,
                "judge check": (
                    c.verdict
                    if c is not None and c.verdict
                    else (e.reason if e is not None and e.reason else "–")
                ),
                "audit needed": ""
                if forecast is None or forecast.queries is None
                else f"about {forecast.queries} queries",
            }
        )
    return rows


def corrected_panel(cmp: ComparisonFigures) -> None:
    """Draw the panel (nothing when no judge label is among the effective labels)."""
    import pandas as pd

    trust = cmp.corrected
    if trust is None or not cmp.deltas:
        return
    mark = "UNRELIABLE — " if cmp.unreliable else ""  # forced past the gate, as every figure
    st.subheader(f"{mark}Can I trust the judge? Plain and judge-corrected intervals")
    if trust.reason is not None:
        st.warning(md(f"No judge-corrected interval yet: {trust.reason}."))
        if trust.command is not None:
            st.code(command_line(trust.command), language="bash", wrap_lines=True)
    else:
        s = trust.sample
        drawn = "" if s is None else f" of audit sample #{s.id} (seed {s.seed})"
        st.caption(md(f"PPI++ on {len(trust.audited)} audited queries{drawn}: {trust.method}."))
    st.dataframe(
        pd.DataFrame(corrected_rows(cmp)),
        hide_index=True,
        key="compare_corrected",
        column_config={
            "difference": st.column_config.NumberColumn(format="%+.4f"),
            "judge-corrected": st.column_config.NumberColumn(format="%+.4f"),
            "λ": st.column_config.NumberColumn(format="%.2f"),
        },
    )
    st.caption(
        "The plain interval trusts the judge's labels; the judge-corrected one checks them "
        "against the audited queries. Robust: both exclude 0 on the same side, or both include "
        "it; judge-dependent: the judge's errors could decide the verdict. Audit needed: "
        "queries for a corrected interval twice as wide as the plain one."
    )
