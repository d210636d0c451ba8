"""The Compare page's trust panel (metrics/corrected.py): the judges canaries fooled, the audit's
size, each difference's plain interval beside its judge-corrected one with the verdict on the
plain one (reports/trust_text.py words it as every report does), or, before an audit, why there
is none, what to run, and how many audited queries would do."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.reports.command_line import command_line
from judgepool.reports.trust_text import (
    CLIPPED_NOTE,
    VERDICT_LEGEND,
    any_clipped,
    audit_size,
    fooled_line,
    verdict_lines,
)
from judgepool.ui.dashboard.view import md

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures


def _interval(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"


def corrected_rows(cmp: ComparisonFigures) -> list[dict[str, Any]]:
    """One row per difference: plain and corrected estimates, intervals, audit size, and the
    judge check (robust / judge-biased / too small to tell; not named `verdict`, the
    differences table's own Holm verdict column)."""
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
                "corrected 95%": "–"
                if e is None
                else _interval(e.ci) + (" *" if c is not None and any_clipped([c]) else ""),
                "audited": "" if e is None else f"{e.audited} of {e.of}",
                "λ": None if e is None else e.lam,
                "judge check": (
                    c.verdict.word
                    if c is not None and c.verdict is not None
                    else (e.reason if e is not None and e.reason else "–")
                ),
                "audit needed": ""
                if forecast is None or forecast.queries is None
                else f"about {forecast.queries} queries",
            }
        )
    return rows


def corrected_panel(cmp: ComparisonFigures) -> None:
    """Draw the panel (nothing when no judge label is among the effective labels and no judge
    whose labels count was fooled by canaries)."""
    import pandas as pd

    trust = cmp.corrected
    fooled = [fooled_line(row) for row in cmp.evaluation.fooled]
    if (trust is None or not cmp.deltas) and not fooled:
        return
    mark = "UNRELIABLE — " if cmp.unreliable else ""  # forced past the gate, as every figure
    st.subheader(f"{mark}Can I trust the judge? Plain and judge-corrected intervals")
    for line in fooled:
        st.error(md(line))
    if trust is None or not cmp.deltas:
        return
    if trust.reason is not None:
        st.warning(md(f"No judge-corrected interval yet: {trust.reason}."))
        if trust.command is not None:
            st.code(command_line(trust.command), language="bash", wrap_lines=True)
    else:
        st.caption(md(f"On {audit_size(trust)}: {trust.method}."))
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
    found = [
        (d.candidate, d.measure, trust.deltas.get((d.candidate, d.measure))) for d in cmp.deltas
    ]
    for line in verdict_lines(found):
        st.info(md(line))
    notes = [
        "The plain interval trusts the judge's labels; the judge-corrected one checks them "
        "against the audited queries.",
        VERDICT_LEGEND[0].upper() + VERDICT_LEGEND[1:] + ".",
        "Audit needed: queries for a corrected interval twice as wide as the plain one.",
    ]
    if any_clipped([c for _, _, c in found]):
        notes.append(CLIPPED_NOTE)
    st.caption(md(" ".join(notes)))
