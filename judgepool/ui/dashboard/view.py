"""The settings every page shares (database, level, judge, depth, k, live refresh): the sidebar.

The sidebar is drawn once per rerun by `ui/app.py` before the page runs; pages read the chosen
values with `current()`. Every figure states its level, so `View.label` is what titles show.
Text that comes from the data (run names, ids) is escaped before it goes into any element that
renders Markdown (`md`), and passages are only ever shown with `st.text` / `st.code`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from judgepool.api.store import resolve_db_path
from judgepool.defaults import DEPTH, LEVEL, LEVELS, K, Level
from judgepool.errors import DatabaseBusyError, JudgepoolError
from judgepool.ui.dashboard import data, links
from judgepool.ui.reporting import on_the_command_line

ANY_JUDGE = "any judge"
REFRESH_CHOICES = (2, 5, 10, 30)
# Characters that start Markdown (or Streamlit's :colour[...] / :emoji:) formatting.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~$:])")


@dataclass(frozen=True)
class View:
    """What the user chose in the sidebar."""

    db: str
    level: Level
    labeller: str | None
    depth: int
    k: int
    live: bool
    refresh_s: int

    @property
    def label(self) -> str:
        """`chunk level · k=10 · any judge`: said by every figure."""
        labeller = ANY_JUDGE if self.labeller is None else f"judge {self.labeller}"
        return f"{self.level} level · k={self.k} · {labeller}"

    @property
    def link(self) -> dict[str, list[str]]:
        """The sidebar's part of the URL: the level always, the rest when not the default."""
        params: dict[str, list[str]] = {"level": [self.level]}
        if self.labeller is not None:
            params["judge"] = [self.labeller]
        if self.depth != DEPTH:
            params["depth"] = [str(self.depth)]
        if self.k != K:
            params["k"] = [str(self.k)]
        return params

    @property
    def run_every(self) -> float | None:
        """How often page bodies refresh themselves (None: only on interaction)."""
        return float(self.refresh_s) if self.live else None


def md(text: str) -> str:
    """Escape data for elements that render Markdown (titles, captions, banners)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def as_level(value: object) -> Level:
    """The sidebar's level choice as the closed type (its radio offers only the levels)."""
    return "doc" if value == "doc" else "chunk"


def database() -> str:
    """The database the dashboard reads: JUDGEPOOL_DB (set by `judgepool ui --db`)."""
    return str(resolve_db_path(None).resolve())


def sidebar() -> View:
    """Draw the shared controls and return the choices."""
    db = database()
    bar = st.sidebar
    # A caption, not st.code: a code block loads a syntax highlighter in the browser on every
    # page (about 0.6 s of its main thread), and a path needs none.
    bar.caption(f"database: {md(db)}")
    version = safe_version(db, quiet=True)
    # Open on the level that has labels (the rule every command follows without --level): a
    # database labelled only per document (re-chunking) would show nothing at the chunk level.
    try:
        first = data.default_level(db, version) if version is not None else LEVEL
    except JudgepoolError:
        first = LEVEL
    levels = LEVELS
    link = links.first_time("sidebar")
    if "level" not in st.session_state:
        st.session_state["level"] = first
    if link:
        links.take_choice("level", "level", levels, "level (chunk or doc)")
    level = bar.radio("Level", levels, key="level", horizontal=True)
    judges: list[str] = []
    if version is not None:
        try:
            judges = data.judge_labellers(db, version, as_level(level))
        except JudgepoolError:
            judges = []
    if link:
        links.take_choice("judge", "judge", judges, f"judge with labels at the {level} level")
    choice = bar.selectbox("Judge labels", [ANY_JUDGE, *judges], key="judge")
    for key, default in (("depth", DEPTH), ("k", K)):
        st.session_state.setdefault(key, default)
        if link:
            links.take_number(key, key, 1, 1000)
    depth = bar.number_input("Pool depth", min_value=1, max_value=1000, key="depth")
    k = bar.number_input("Cutoff k", min_value=1, max_value=1000, key="k")
    live = bar.toggle("Live refresh", value=True, key="live")
    refresh = bar.selectbox(
        "every (s)", REFRESH_CHOICES, index=1, key="refresh_s", disabled=not live
    )
    bar.button("Refresh now", key="refresh_now")
    return View(
        db=db,
        level=as_level(level),
        labeller=None if choice in (None, ANY_JUDGE) else str(choice),
        depth=int(depth),
        k=int(k),
        live=bool(live),
        refresh_s=int(refresh),
    )


def current() -> View:
    """The sidebar's choices, as stored by `sidebar()` in this rerun."""
    view = st.session_state.get("_view")
    if isinstance(view, View):
        return view
    return sidebar()


def safe_version(db: str, quiet: bool = False) -> data.Version | None:
    """The database fingerprint, or None with a notice (no file, busy) instead of a traceback."""
    last = st.session_state.get("_last_version")
    try:
        found = data.db_state(db)
    except DatabaseBusyError:
        if not quiet:
            st.info(
                "The database is busy with a long write; this page retries on its own"
                + (" (showing the figures of the last read)." if last else ".")
            )
        # The cached figures of the last read need no database access: keep showing them.
        return last[1] if last and last[0] == db else None
    except JudgepoolError as err:
        if not quiet:
            show_error(err)
        return None
    version = None if found is None else found[0]
    if found is not None:
        st.session_state["_last_version"] = (db, version)
        st.session_state["_activity"] = (db, found[1])
    if version is None and not quiet:
        st.warning(
            f"No database at {md(db)} yet: create it with `judgepool ingest ...`, or start the "
            "dashboard with `judgepool --db FILE ui`."
        )
    return version


def show_error(err: JudgepoolError) -> None:
    """A judgepool error as the CLI would print it: the problem, then what to do."""
    if isinstance(err, DatabaseBusyError):
        st.info("The database is busy with a long write; this page retries on its own.")
        return
    st.error(md(on_the_command_line(err)))
