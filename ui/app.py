"""The judgepool dashboard: the Streamlit entry point that `judgepool ui` serves.

Pages: Runs (every run's measures with intervals, judged@k against the gate, holes), Compare
(paired differences behind the judged@k gate), Audit (labels, provenance, human overrides,
judge-vs-human agreement, a seeded audit sample), Export (qrels and JSONL downloads). The
sidebar's level, judge, depth and k apply to every page. The database is JUDGEPOOL_DB.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from judgepool.ui.dashboard.view import sidebar

HERE = Path(__file__).resolve().parent
PAGES = (
    ("runs", "Runs", ":material/leaderboard:"),
    ("compare", "Compare", ":material/compare_arrows:"),
    ("audit", "Audit", ":material/fact_check:"),
    ("export", "Export", ":material/download:"),
)

st.set_page_config(page_title="judgepool", page_icon=":material/balance:", layout="wide")
navigation = st.navigation(
    [
        st.Page(
            HERE / "dashboard" / f"{name}.py",
            title=title,
            icon=icon,
            url_path=name,
            default=name == "runs",
        )
        for name, title, icon in PAGES
    ]
)
st.session_state["_view"] = sidebar()
navigation.run()
