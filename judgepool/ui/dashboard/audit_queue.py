"""The Audit page's labelling queue: the audit sample's judge-labelled pairs, one per screen, for a
person to grade fast and blind.

One pair per screen: the query and the passage as plain text (`st.text`, in a scrolling box so
the grade buttons stay in view), four grade buttons, Skip and Undo, with keys 0-3, S and U. The
queue is its own fragment: a grade redraws the queue, not the page. Grading saves a human label
at once (it is effective from then on) and opens the next pair; the confirmation, with the
judge's grade now revealed, stays above the next pair until the next action, and a toast repeats
it. The judge's grade is hidden until the person has graded, unless they ask to see it first.
Progress: pairs labelled of the sample's pairs, and queries fully audited.

A press acts only on the pair that was on screen when it was made (queue_keys.py sends the pair
with each key; each pair has its own buttons): a press that arrives once that pair is graded, or
no longer shown, is ignored and said, never applied to the pair drawn since. Skipped pairs come
back after the others; they are in the page's link (`skip=QID DOC_ID`), so a reload keeps them.
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.defaults import Level
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import queue_keys, trust_data
from judgepool.ui.dashboard.view import View, md, safe_version
from judgepool.ui.reporting import on_the_command_line

if TYPE_CHECKING:
    from judgepool.api.audit_queue import AuditSample, ListedPair

GRADE_NAMES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}
CURRENT = "queue_current"
HISTORY = "queue_history"
FLASH = "queue_flash"
TOAST = "queue_toast"
SKIPPED = "queue_skipped"
SHOWN = "_queue_shown"
READ = "_queue_read"
OWN = "_queue_own"
Pair = tuple[str, str]


def _user() -> str:
    try:
        return getpass.getuser() or "auditor"
    except (KeyError, OSError):
        return "auditor"


def _say(kind: str, text: str) -> None:
    st.session_state[FLASH] = (kind, text)
    st.session_state[TOAST] = text


def _graded_here() -> set[Pair]:
    """The pairs graded in this session and not undone."""
    return {(label.qid, label.doc_id) for label in st.session_state.get(HISTORY, [])}


def _stale(pair: Pair, what: str) -> bool:
    """Whether a press made while `pair` was on screen comes too late to act on it (said)."""
    shown: tuple[ListedPair, int, int] | None = st.session_state.get(SHOWN)
    now = None if shown is None else (shown[0].qid, shown[0].doc_id)
    if pair in _graded_here():
        why = "it was already graded: the next pair was not on screen yet when it was pressed"
    elif pair != now:
        why = "it is no longer the pair on screen"
    else:
        return False
    here = f" Press it again for {now[0]} · {now[1]} if you meant it." if now is not None else ""
    _say("info", f"Ignored {what} for {pair[0]} · {pair[1]}: {why}.{here}")
    return True


def _grade(db: str, level: Level, sample_id: int, pair: Pair, grade: int) -> None:
    """Save `grade` for `pair` (the pair on screen when it was given), then open the next one."""
    if _stale(pair, f"grade {grade}"):
        return
    listed, total, done = st.session_state[SHOWN]
    blind = not st.session_state.get("queue_peek", False)
    try:
        user = str(st.session_state.get("queue_user", ""))
        label = trust_data.save(db, sample_id, pair[0], pair[1], grade, user, level, blind)
    except JudgepoolError as err:
        _say("error", on_the_command_line(err))
        return
    st.session_state.setdefault(HISTORY, []).append(label)
    st.session_state[CURRENT] = None
    _own_write(pair, grade)
    _say(
        "success",
        f"Saved grade {grade} ({GRADE_NAMES[grade]}) for {pair[0]} · {pair[1]} as a human "
        f"label by {label.labeller} ({done + 1} of {total} labelled). The judge had said "
        f"{listed.judge_grade}.",
    )


def _undo(db: str) -> None:
    """Remove the label saved last in this session and show its pair again."""
    history: list[Any] = st.session_state.get(HISTORY, [])
    if not history:
        _say("info", "Nothing to undo: no grade was saved in this session.")
        return
    label = history[-1]
    try:
        trust_data.undo(db, label)
    except JudgepoolError as err:
        _say("error", on_the_command_line(err))
        return
    history.pop()
    st.session_state[CURRENT] = (label.qid, label.doc_id)
    _own_write((label.qid, label.doc_id), None)
    _say(
        "info",
        f"Undone: grade {label.grade} for {label.qid} · {label.doc_id} is removed. Grade it again.",
    )


def _skip(pair: Pair) -> None:
    if _stale(pair, "skip"):
        return
    skipped: list[Pair] = st.session_state.setdefault(SKIPPED, [])
    if pair not in skipped:
        skipped.append(pair)
    st.session_state[CURRENT] = None
    _say("info", f"Skipped {pair[0]} · {pair[1]}: it comes back after the others.")


def _audited(sample: AuditSample, pairs: list[ListedPair]) -> set[str]:
    """The sample's queries whose pairs all have a human label."""
    left = {p.qid for p in pairs if p.human_grade is None}
    return {p.qid for p in pairs if p.qid in sample.qids and p.qid not in left}


def _own_write(pair: Pair, grade: int | None) -> None:
    """The queue as it is after this session's own grade or undo of `pair`, for the redraw that
    follows: it needs no read of the database (the reads took most of a key's 4-8 s, issue 24).
    What others write meanwhile appears at the next refresh, which reads the database again."""
    read: tuple[AuditSample, list[ListedPair], int] | None = st.session_state.get(READ)
    if read is None:
        return
    sample, pairs, audited = read
    after = [
        dataclasses.replace(p, human_grade=grade) if (p.qid, p.doc_id) == pair else p for p in pairs
    ]
    audited += len(_audited(sample, after)) - len(_audited(sample, pairs))
    st.session_state[OWN] = (sample, after, audited)


def _read(view: View) -> tuple[AuditSample | None, list[ListedPair], int]:
    """The sample, its queue and its queries fully audited: after this session's own write as it
    left them, else from the database."""
    own: tuple[AuditSample, list[ListedPair], int] | None = st.session_state.pop(OWN, None)
    if own is not None:
        return own
    version = safe_version(view.db)  # this fragment also reruns alone: read the database now
    if version is None:
        return None, [], 0
    sample = trust_data.sample(view.db, version, view.level)
    if sample is None:
        return None, [], 0
    pairs = trust_data.queue(view.db, version, view.level)
    return sample, pairs, trust_data.status(view.db, version, view.level).audited


def _on_key(db: str, level: Level, sample_id: int) -> None:
    """A key of the queue (queue_keys.py): grade, skip or undo the pair it was pressed on."""
    found = queue_keys.pressed()
    if found is None:
        return
    key, pair = found
    if key == "u":
        _undo(db)
    elif pair is None:
        _say("info", f"Ignored the key {key.upper()}: no pair was on screen.")
    elif key == "s":
        _skip(pair)
    else:
        _grade(db, level, sample_id, pair, int(key))


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


def skipped_link() -> list[str]:
    """The skipped pairs as the link says them: `QID DOC_ID` (ids never hold whitespace)."""
    return [f"{qid} {doc_id}" for qid, doc_id in st.session_state.get(SKIPPED, [])]


def take_skipped(values: list[str]) -> None:
    """The skipped pairs of a link (`skip=QID DOC_ID`, repeated)."""
    found = [tuple(v.split(" ", 1)) for v in values if " " in v.strip()]
    st.session_state[SKIPPED] = [(str(q), str(d)) for q, d in found]


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


def _tag(pair: Pair) -> str:
    """A short tag of a pair, for the keys of its own buttons."""
    return hashlib.sha1("\t".join(pair).encode()).hexdigest()[:10]


def queue_panel(view: View, share: Callable[[], None]) -> None:
    """The queue (see the module docstring), redrawn alone when a key or button acts; `share`
    writes the page's link (the skipped pairs are in it)."""
    _queue(view, share)


@st.fragment
def _queue(view: View, share: Callable[[], None]) -> None:
    sample, pairs, audited = _read(view)
    _flash()
    st.session_state[READ] = None if sample is None else (sample, pairs, audited)
    if sample is None:
        st.session_state[SHOWN] = None
        if safe_version(view.db, quiet=True) is not None:
            _no_sample(view)
        return
    done = sum(p.human_grade is not None for p in pairs)
    head, who, peek = st.columns([5, 2, 2], vertical_alignment="bottom")
    head.progress(
        done / len(pairs) if pairs else 1.0,
        text=f"{done} of {len(pairs)} pairs labelled · {audited} of {len(sample.qids)} "
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
    st.session_state[SHOWN] = None if pair is None else (pair, len(pairs), done)
    on_screen = None if pair is None else (pair.qid, pair.doc_id)
    share()
    if pair is None or on_screen is None:
        st.success(
            "Every pair of the audit sample has a human label: its queries are fully audited. "
            "Compare and eval now show judge-corrected intervals."
        )
        st.button("Undo", key="queue_undo", on_click=_undo, args=(view.db,), disabled=not history)
        queue_keys.listen(None, lambda: _on_key(view.db, view.level, sample.id))
        return
    st.subheader(f"{md(pair.qid)} · {md(pair.doc_id)}")
    st.text(f"Query: {pair.query if pair.query is not None else '(no query text)'}")
    st.caption("Passage" if view.level == "chunk" else "Document (the chunks the runs retrieved)")
    # Heights fit a 900-px-high window: the buttons and the key help stay in view (issue 22).
    with st.container(height=200, border=True, key="queue_passage"):
        st.text(pair.passage if pair.passage is not None else "(no passage text)")
    if st.session_state.get("queue_peek"):
        st.caption(f"The judge's grade: {pair.judge_grade}")
    tag = _tag(on_screen)
    cells = st.columns([3, 3, 3, 3, 2, 2])
    for grade, cell in zip(GRADE_NAMES, cells, strict=False):
        cell.button(
            f"{grade} · {GRADE_NAMES[grade]}",
            key=f"queue_grade_{grade}_{tag}",
            type="primary",
            on_click=_grade,
            args=(view.db, view.level, sample.id, on_screen, grade),
            width="stretch",
        )
    cells[4].button(
        "Skip", key=f"queue_skip_{tag}", on_click=_skip, args=(on_screen,), width="stretch"
    )
    cells[5].button(
        "Undo",
        key="queue_undo",
        on_click=_undo,
        args=(view.db,),
        disabled=not history,
        width="stretch",
    )
    st.caption(
        "Keys: 0-3 grade the pair on screen (saved at once), S skips it, U undoes the last "
        "grade. A key pressed before the next pair is on screen is ignored."
    )
    # Last, once the pair is drawn: its keys are sent with this pair only once it is on screen.
    queue_keys.listen(on_screen, lambda: _on_key(view.db, view.level, sample.id))
