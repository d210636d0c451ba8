"""The Audit page's judge-vs-judge panel: how much the judges agree (Krippendorff's alpha over the
chosen judges, Cohen's kappas for every two, a confusion heatmap), beside the judge-vs-human
panel. Figures from metrics/judges.py; labeller names are escaped wherever Markdown renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from judgepool.api import browse, judges
from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.charts import confusion_chart
from judgepool.ui.dashboard.view import View, md

if TYPE_CHECKING:
    from judgepool.api.judges import JudgesAgreement

PICK = "judges_pick"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@st.cache_data(show_spinner=False, max_entries=64)
def judges_agreement(
    db: str, version: data.Version, level: Level, labellers: tuple[str, ...]
) -> JudgesAgreement:
    """Judge-vs-judge agreement of the chosen judges (cached per database version)."""
    return judges.judges_agreement(Store(db), level=level, judges=labellers)


def judges_panel(view: View, version: data.Version) -> None:
    """Pick two or more judges; their agreement on the pairs at least two of them labelled."""
    import pandas as pd

    names = data.judge_labellers(view.db, version, view.level)
    with st.expander(
        md(f"Judge vs judge agreement — {len(names)} judges at the {view.level} level"),
        expanded=len(names) > 1,
    ):
        if len(names) < 2:
            st.info(
                "Only one judge has labelled at this level: run several at once "
                "(judgepool judge --model A --model B) to see whether they agree."
            )
            return
        singles = [n for n in names if not browse.is_jury(n)]
        default = singles if len(singles) >= 2 else names
        if PICK in st.session_state:
            st.session_state[PICK] = [n for n in st.session_state[PICK] if n in names]
        else:
            st.session_state[PICK] = default[:4]
        picked = st.multiselect("Judges to compare", names, key=PICK)
        if len(picked) < 2:
            st.caption("Choose two judges or more.")
            return
        found = judges_agreement(view.db, version, view.level, tuple(picked))
        a, b, c = st.columns(3)
        a.metric("Pairs labelled by ≥ 2", found.units)
        b.metric("Krippendorff's α (ordinal)", _num(found.alpha_ordinal))
        c.metric("Krippendorff's α (nominal)", _num(found.alpha_nominal))
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "judge": p.first,
                        "judge ": p.second,
                        "pairs": p.pairs,
                        "exact": p.exact,
                        "κ (0-3)": p.kappa,
                        "κ (≥ 2)": p.kappa_binary,
                        "quadratic κ": p.kappa_quadratic,
                    }
                    for p in found.pairwise
                ],
            ),
            hide_index=True,
            key="judges_pairwise",
        )
        shown = [p for p in found.pairwise if p.pairs]
        if shown:
            first = shown[0]
            st.altair_chart(
                confusion_chart(
                    first.confusion, f"{first.first} vs {first.second}", f"{view.level} level"
                ),
                key="judges_confusion",
            )
            st.caption("Rows: the first judge's grade; columns: the second's.")
