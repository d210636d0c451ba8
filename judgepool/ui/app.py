"""The judgepool dashboard: the Streamlit entry point that `judgepool ui` serves.

Pages: Runs (every run's measures with intervals, judged@k against the gate, holes), Compare
(paired differences behind the judged@k gate), Audit (labels, provenance, human overrides,
judge-vs-human agreement, a seeded audit sample), Export (qrels and JSONL downloads). The
sidebar's level, judge, depth and k apply to every page. The database is JUDGEPOOL_DB.

Every page has its own URL (/runs, /compare, /audit, /export). Streamlit serves its default
page at the bare URL only, so the default here is a hidden page that sends the visitor on to
/runs: the bare URL opens Runs, and /runs is a page like the others.
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

# An emoji icon is drawn by the web page itself; a :material/...: one is fetched from the internet.
st.set_page_config(page_title="judgepool", page_icon="⚖️", layout="wide")
pages = [
    st.Page(HERE / "dashboard" / f"{name}.py", title=title, icon=icon, url_path=name)
    for name, title, icon in PAGES
]


def start() -> None:
    """The bare URL: go on to the Runs page (so its URL is /runs, as the menu says)."""
    st.switch_page(pages[0])


navigation = st.navigation(
    [st.Page(start, title="judgepool", url_path="start", default=True, visibility="hidden"), *pages]
)
st.session_state["_view"] = sidebar()
navigation.run()
