"""The Audit page's labelling queue: the audit sample's judge-labelled pairs, one per screen, for a
person to grade fast and blind.

One pair per screen: the query and the passage as plain text (`st.text`, in a scrolling box so
the grade buttons stay in view), four grade buttons with keyboard shortcuts 0-3 (Streamlit's
button `shortcut`), Undo (key U) and Skip (key S). Grading saves a human label at once (it is
effective from then on) and opens the next pair; the confirmation, with the judge's grade now
revealed, stays above the next pair until the next action, and a toast repeats it. The judge's
grade is hidden until the person has graded, unless they ask to see it first. Progress: pairs
labelled of the sample's pairs, and queries fully audited.
"""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.defaults import Level
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import trust_data
from judgepool.ui.dashboard.view import View, md
from judgepool.ui.reporting import on_the_command_line

if TYPE_CHECKING:
    from judgepool.api.audit_queue import ListedPair
    from judgepool.ui.dashboard.data import Version

GRADE_NAMES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
CURRENT = "queue_current"
HISTORY = "queue_history"
FLASH = "queue_flash"
TOAST = "queue_toast"
SKIPPED = "queue_skipped"


def _user() -> str:
    try:
        return getpass.getuser() or "auditor"
    except (KeyError, OSError):
        return "auditor"


def _say(kind: str, text: str) -> None:
    st.session_state[FLASH] = (kind, text)
    st.session_state[TOAST] = text


def _grade(
    db: str, level: Level, sample_id: int, pair: ListedPair, grade: int, total: int, done: int
) -> None:
    """Button callback: save the grade, then the next pair (the page redraws after this)."""
    blind = not st.session_state.get("queue_peek", False)
    try:
        user = str(st.session_state.get("queue_user", ""))
        label = trust_data.save(db, sample_id, pair.qid, pair.doc_id, grade, user, level, blind)
    except JudgepoolError as err:
        _say("error", on_the_command_line(err))
        return
    st.session_state.setdefault(HISTORY, []).append(label)
    st.session_state[CURRENT] = None
    _say(
        "success",
        f"Saved grade {grade} ({GRADE_NAMES[grade]}) for {pair.qid} · {pair.doc_id} as a human "
        f"label by {label.labeller} ({done + 1} of {total} labelled). The judge had said "
        f"{pair.judge_grade}.",
    )


def _undo(db: str) -> None:
    """Button callback: remove the label saved last in this session and show its pair again."""
    history: list[Any] = st.session_state.get(HISTORY, [])
    if not history:
        return
    label = history.pop()
    try:
        trust_data.undo(db, label)
    except JudgepoolError as err:
        _say("error", on_the_command_line(err))
        return
    st.session_state[CURRENT] = (label.qid, label.doc_id)
    _say(
        "info",
        f"Undone: grade {label.grade} for {label.qid} · {label.doc_id} is removed. Grade it again.",
    )


def _skip(pair: ListedPair) -> None:
    st.session_state.setdefault(SKIPPED, []).append((pair.qid, pair.doc_id))
    st.session_state[CURRENT] = None
    _say("info", f"Skipped {pair.qid} · {pair.doc_id}: it comes back after the others.")


def _draw(db: str, level: Level, depth: int, labeller: str | None) -> None:
    try:
        note = trust_data.draw(
            db,
            int(st.session_state.get("queue_queries", 15)),
            int(st.session_state.get("queue_seed", 1)),
            depth,
            level,
            labeller,
        )
    except JudgepoolError as err:
        _say("error", on_the_command_line(err))
        return
    _say("success", f"Audit sample drawn: {note}.")


def _next(pairs: list[ListedPair]) -> ListedPair | None:
    """The pair to show: the one asked for (undo), else the first without a human label, the
    skipped ones last."""
    todo = [p for p in pairs if p.human_grade is None]
    wanted = st.session_state.get(CURRENT)
    for p in todo:
        if wanted is not None and (p.qid, p.doc_id) == tuple(wanted):
            return p
    skipped = {tuple(s) for s in st.session_state.get(SKIPPED, [])}
    fresh = [p for p in todo if (p.qid, p.doc_id) not in skipped]
    found = fresh or todo
    return found[0] if found else None


def _flash() -> None:
    found = st.session_state.get(FLASH)
    if found:
        kind, text = found
        {"success": st.success, "error": st.error, "info": st.info}[kind](md(text))
    toast = st.session_state.pop(TOAST, None)
    if toast:
        st.toast(md(toast))


def _no_sample(view: View) -> None:
    st.info(
        "No audit sample at this level yet. Draw some queries at random: every pair of theirs "
        "that a judge labelled in the pool is queued here for you to grade, and once two or "
        "more are fully audited, Compare shows a judge-corrected interval beside the plain one."
    )
    a, b, c = st.columns([1, 1, 2], vertical_alignment="bottom")
    a.number_input("Queries", 1, 10_000, 15, key="queue_queries")
    b.number_input("Seed", 0, 2**31 - 1, 1, key="queue_seed")
    c.button(
        "Draw the audit sample",
        key="queue_draw",
        on_click=_draw,
        args=(view.db, view.level, view.depth, view.labeller),
    )
    st.caption("The same from a shell:")
    st.code(
        f"judgepool audit sample --queries 15 --depth {view.depth} --level {view.level}",
        language="bash",
    )


def queue_panel(view: View, version: Version) -> None:
    """The queue (see the module docstring)."""
    sample = trust_data.sample(view.db, version, view.level)
    _flash()
    if sample is None:
        _no_sample(view)
        return
    pairs = trust_data.queue(view.db, version, view.level)
    status = trust_data.status(view.db, version, view.level)
    done = sum(p.human_grade is not None for p in pairs)
    head, who, peek = st.columns([5, 2, 2], vertical_alignment="bottom")
    head.progress(
        done / len(pairs) if pairs else 1.0,
        text=f"{done} of {len(pairs)} pairs labelled · {status.audited} of {len(sample.qids)} "
        f"queries fully audited (audit sample #{sample.id}, seed {sample.seed})",
    )
    who.text_input("Your name", value=_user(), key="queue_user")
    peek.toggle(
        "Judge's grade first",
        value=False,
        key="queue_peek",
        help="Off (blind): the judge's grade is shown only after you graded.",
    )
    pair = _next(pairs)
    history = st.session_state.get(HISTORY, [])
    if pair is None:
        st.success(
            "Every pair of the audit sample has a human label: its queries are fully audited. "
            "Compare and eval now show judge-corrected intervals."
        )
        st.button(
            "Undo",
            key="queue_undo",
            shortcut="U",
            on_click=_undo,
            args=(view.db,),
            disabled=not history,
        )
        return
    st.subheader(f"{md(pair.qid)} · {md(pair.doc_id)}")
    st.caption("Query")
    st.text(pair.query if pair.query is not None else "(no query text)")
    st.caption("Passage" if view.level == "chunk" else "Document (the chunks the runs retrieved)")
    with st.container(height=280, border=True, key="queue_passage"):
        st.text(pair.passage if pair.passage is not None else "(no passage text)")
    if st.session_state.get("queue_peek"):
        st.caption(f"The judge's grade: {pair.judge_grade}")
    cells = st.columns(4)
    for grade, cell in zip(GRADE_NAMES, cells, strict=True):
        cell.button(
            f"{grade} · {GRADE_NAMES[grade]}",
            key=f"queue_grade_{grade}",
            shortcut=str(grade),
            type="primary",
            on_click=_grade,
            args=(view.db, view.level, sample.id, pair, grade, len(pairs), done),
            width="stretch",
        )
    _, skip, undo = st.columns([2, 1, 1])
    skip.button(
        "Skip", key="queue_skip", shortcut="S", on_click=_skip, args=(pair,), width="stretch"
    )
    undo.button(
        "Undo",
        key="queue_undo",
        shortcut="U",
        on_click=_undo,
        args=(view.db,),
        disabled=not history,
        width="stretch",
    )
    st.caption(
        "Keys: 0-3 grade the pair and open the next one, S skips it, U undoes the last "
        "grade. Grades are saved at once as human labels."
    )
