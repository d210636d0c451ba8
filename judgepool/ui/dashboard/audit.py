"""Audit page: the labelling queue of the audit sample, label browsing with one pair's labels and
a human override that becomes the effective label, and the judge's agreement with people
(pairs labelled by both, and calibration runs).

Three tabs, so that what a person works on is at the top of the page: "Label queue"
(ui/dashboard/audit_queue.py), "Browse & override" (the list on the left, the open pair on the
right: the save confirmation at its top until the next action (a toast repeats it), its texts in a
scrolling box, then the override form, then its labels, so the form is in view),
and "Agreement & calibration". Passages, queries, raw judge output and notes are data: they are
shown with `st.text`, `st.code`, `st.json` or in tables, never as Markdown or HTML. A Streamlit
page script (run by `st.navigation` with `__name__ == "__main__"`).
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from typing import Any

import streamlit as st

from judgepool.api import browse as browse_api
from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import data, links
from judgepool.ui.dashboard.audit_calibration import calibration_panel
from judgepool.ui.dashboard.audit_parts import agreement_panel, label_detail, sample_panel
from judgepool.ui.dashboard.audit_queue import queue_panel, skipped_link, take_skipped
from judgepool.ui.dashboard.judges_panel import judges_panel
from judgepool.ui.dashboard.page import render_page
from judgepool.ui.dashboard.prompt_view import show_prompt
from judgepool.ui.dashboard.view import View, current, md, safe_version, show_error
from judgepool.ui.reporting import on_the_command_line

PAIR = "audit_pair"
FLASH = "_audit_flash"
TABS = ("Label queue", "Browse & override", "Agreement & calibration")
GRADE_NAMES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
LIMIT = 500


def default_user() -> str:
    """The OS user name, as the default name on overrides."""
    try:
        return getpass.getuser() or "auditor"
    except (KeyError, OSError):
        return "auditor"


def _save_override(db: str, qid: str, doc_id: str, level: Level) -> None:
    """Form callback: write the override before the page redraws, so it shows at once."""
    grade = st.session_state.get("override_grade")
    try:
        done = browse_api.override(
            Store(db),
            qid,
            doc_id,
            int(grade) if grade is not None else -1,
            str(st.session_state.get("override_user", "")),
            note=str(st.session_state.get("override_note", "")),
            level=level,
            via="dashboard",
        )
    except JudgepoolError as err:
        st.session_state[FLASH] = (
            "error",
            on_the_command_line(err),
            (qid, doc_id),
        )
        return
    text = (
        f"Saved grade {done.grade} for ({qid}, {doc_id}) as a human label by {done.labeller}; "
        "it is now the effective label everywhere."
    )
    st.session_state[FLASH] = ("success", text, (qid, doc_id))
    st.session_state["_audit_toast"] = text
    st.session_state["override_note"] = ""


def _multiselect(container: Any, label: str, options: Sequence[Any], key: str) -> list[Any]:
    """A multiselect whose remembered choices are dropped when they are no longer options."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]
    return list(container.multiselect(label, options, key=key))


def browse(view: View, version: data.Version) -> list[tuple[str, str]]:
    """Filters and the label listing; returns the listed pairs (newest label first)."""
    import pandas as pd

    f = data.facets(view.db, version, view.level)
    runs = data.run_names(view.db, version)
    cols = [*st.columns(3), *st.columns(3)]
    flt = browse_api.LabelFilter(
        level=view.level,
        runs=tuple(_multiselect(cols[0], f"Run (top {view.depth})", runs, "audit_runs")),
        depth=view.depth,
        qids=tuple(_multiselect(cols[1], "Query", f.qids, "audit_qids")),
        grades=tuple(_multiselect(cols[2], "Grade", f.grades, "audit_grades")),
        sources=tuple(_multiselect(cols[3], "Source", f.sources, "audit_sources")),
        labellers=tuple(_multiselect(cols[4], "Labeller", f.labellers, "audit_labellers")),
        statuses=tuple(_multiselect(cols[5], "Status", f.statuses, "audit_statuses")),
    )
    listing = data.labels(view.db, version, flt, view.labeller, LIMIT)
    frame = pd.DataFrame(
        [
            {
                "id": r.id,
                "qid": r.qid,
                "doc_id": r.doc_id,
                "grade": r.grade,
                "source": r.source,
                "labeller": r.labeller,
                "status": r.status,
                "effective": r.effective,
                "created_at": r.created_at,
                "note": r.note or "",
            }
            for r in listing.rows
        ],
        columns=[
            "id",
            "qid",
            "doc_id",
            "grade",
            "source",
            "labeller",
            "status",
            "effective",
            "created_at",
            "note",
        ],
    )
    pairs = [(r.qid, r.doc_id) for r in listing.rows]
    st.session_state["_audit_rows"] = pairs
    st.dataframe(
        frame,
        hide_index=True,
        key="audit_table",
        on_select=_pick_row,
        selection_mode="single-row",
        height=260,
    )
    shown = f"the newest {len(listing.rows)} of " if listing.total > len(listing.rows) else ""
    st.caption(
        f"{shown}{listing.total} labels at the {view.level} level match (newest first); "
        "'effective' marks the label every measure uses. Select a row to open its pair."
    )
    return pairs


def _pick_row() -> None:
    """Table selection callback: open the selected row's pair."""
    state: Any = st.session_state.get("audit_table")
    rows = st.session_state.get("_audit_rows", [])
    try:
        picked = state["selection"]["rows"]
    except (KeyError, TypeError, AttributeError):
        return
    if picked and 0 <= picked[0] < len(rows):
        st.session_state[PAIR] = tuple(rows[picked[0]])


def _confirmation(pair: tuple[str, str]) -> None:
    """The override's outcome, at the top of the pair, until another pair is opened or saved."""
    flash = st.session_state.get(FLASH)
    if flash and tuple(flash[2]) == pair:
        (st.success if flash[0] == "success" else st.error)(md(flash[1]))
    toast = st.session_state.pop("_audit_toast", None)
    if toast:
        st.toast(md(toast))


def pair_view(view: View, version: data.Version, pair: tuple[str, str]) -> None:
    """Query, passage (scrolling), the override form and its confirmation, then every label."""
    qid, doc_id = pair
    detail = data.pair(view.db, version, qid, doc_id, view.level, view.labeller)
    st.subheader(f"Pair {md(qid)} · {md(doc_id)} — {view.level} level")
    _confirmation(pair)
    st.caption("Query")
    st.text(detail.query if detail.query is not None else "(no query text)")
    st.caption(
        "Passage" if view.level == "chunk" else f"Chunks of document ({len(detail.passages)})"
    )
    with st.container(height=200, border=True, key="audit_passage"):
        if not detail.passages:
            st.text("(no passage text)")
        for chunk_id, text in detail.passages:
            if view.level == "doc":
                st.caption(md(chunk_id))
            st.text(text if text is not None else "(no text)")
    with st.form("audit_override_form"):
        st.radio(
            "Override: your grade, stored as a human label (it becomes the effective one)",
            list(GRADE_NAMES),
            horizontal=True,
            key="override_grade",
            format_func=lambda g: f"{g} {GRADE_NAMES[g]}",
            index=None,
        )
        note, user = st.columns([3, 1])
        note.text_area("Note (why)", key="override_note", height=68)
        user.text_input("Your name", value=default_user(), key="override_user")
        st.form_submit_button(
            "Save override",
            key="override_submit",
            on_click=_save_override,
            args=(view.db, qid, doc_id, view.level),
        )
    if detail.ranks:
        st.caption(md("Ranked by: " + ", ".join(f"{run} #{rank}" for run, rank in detail.ranks)))
    st.caption(f"Labels ({len(detail.labels)}, newest first)")
    for label in detail.labels:
        label_detail(label, label.id == detail.effective_id)
    show_prompt(view, qid, doc_id)


def _from_link() -> None:
    """Once per session, open the pair named in the URL (/audit?qid=Q&doc_id=D) and take the
    queue's skipped pairs (skip=QID DOC_ID, repeated)."""
    if st.session_state.get("_audit_linked"):
        return
    st.session_state["_audit_linked"] = True
    qid, doc_id = st.query_params.get("qid"), st.query_params.get("doc_id")
    if qid and doc_id:
        st.session_state[PAIR] = (qid, doc_id)
    take_skipped(links.linked_all("skip"))


def _browse_tab(view: View, version: data.Version) -> None:
    """The list on the left, the open pair on the right (both start at the top)."""
    left, right = st.columns([5, 7], gap="medium")
    with left:
        sample = sample_panel(view, version, PAIR)
        listed = browse(view, version)
        options = list(dict.fromkeys([*listed, *sample]))
        chosen = st.session_state.get(PAIR)
        if chosen is not None:
            chosen = tuple(chosen)
            st.session_state[PAIR] = chosen
            if chosen not in options:
                options.insert(0, chosen)
        if not options:
            st.info("No labels at this level match.")
            return
        picked = st.selectbox(
            "Pair to open",
            options,
            key=PAIR,
            index=None,
            format_func=lambda p: f"{p[0]} · {p[1]}",
        )
    with right:
        if picked is None:
            st.info("Select a row of the list (or pick a pair) to open it here.")
            return
        pair_view(view, version, (str(picked[0]), str(picked[1])))


def body(view: View) -> None:
    """The page (refreshed by the fragment)."""
    _from_link()
    version = safe_version(view.db)
    if version is None:
        return
    linked = st.session_state.get(PAIR) is not None
    try:
        # Only the open tab runs (on_change="rerun"): the queue is not slowed by the label
        # listing and the agreement figures of the tabs nobody looks at.
        queue, browse_tab, agreement = st.tabs(
            list(TABS),
            key="audit_tabs",
            default=TABS[1] if linked else TABS[0],
            on_change="rerun",
        )
        if queue.open:
            with queue:
                queue_panel(view, _share)
        if browse_tab.open:
            with browse_tab:
                _browse_tab(view, version)
        if agreement.open:
            with agreement:
                agreement_panel(view, version)
                judges_panel(view, version)
                calibration_panel(view, version)
    except JudgepoolError as err:
        show_error(err)


def _share() -> None:
    """Write the page's link now (the queue redraws alone, without the page)."""
    links.share(current().link, link())


def link() -> dict[str, list[str]]:
    """This page's part of the URL: the open pair (/audit?qid=Q&doc_id=D) and the queue's
    skipped pairs (skip=QID DOC_ID, repeated)."""
    pair = st.session_state.get(PAIR)
    found = {"qid": [str(pair[0])], "doc_id": [str(pair[1])]} if pair else {}
    skipped = skipped_link()
    return {**found, "skip": skipped} if skipped else found


def render() -> None:
    """Draw the page."""
    render_page("Audit", body, link)


if __name__ == "__main__":
    render()
