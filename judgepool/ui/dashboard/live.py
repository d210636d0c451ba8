"""Figures that are still moving: the "labels being written" banner and the ideal-ranking notes.

While a judge writes labels, every figure is provisional: the banner on every page says so, with
the holes left in the pool (a verdict that flips mid-backfill must read as provisional, not as a
change of mind). And a run's nDCG can move although nothing in its own top k changed: a new
relevant label of a doc it did not rank there raises the query's ideal ranking. Where the
dashboard sees that happen (between the first figures it showed in this session and the current
ones), it says so next to the means; and whenever judge labels count, a caption says it can.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.api import changes
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.view import View, md

if TYPE_CHECKING:
    from judgepool.api.changes import Activity, Shift
    from judgepool.metrics.evaluate import EvaluationFigures

_SEEN = "_first_figures"
SHOWN_SHIFTS = 6


def current_activity(db: str) -> Activity | None:
    """Who was writing labels at this run's read of the database (view.safe_version)."""
    found = st.session_state.get("_activity")
    return found[1] if found and found[0] == db else None


def writing(db: str) -> bool:
    """Whether a judge is writing labels to `db` now."""
    activity = current_activity(db)
    return activity is not None and activity.writing


def _who(activity: Activity) -> str:
    age = activity.label_age_s
    newest = "" if age is None else f"newest label {age:.1f} s ago"
    n = len(activity.judges)
    claims = f"{n} process{'es' * (n != 1)}, {activity.claimed:,} pairs claimed"
    said = "; ".join(part for part in (claims, newest) if part)
    return f"A judge is labelling this database now ({said})."


def writing_banner(view: View, version: data.Version | None) -> None:
    """On every page while a judge writes: "labels being written: n holes left"."""
    activity = current_activity(view.db)
    if activity is None or version is None:
        return
    if activity.writing:
        try:
            holes = data.pool(view.db, version, view.level, view.labeller, view.depth).holes
            left = f"{holes:,} hole{'s' * (holes != 1)} left in the depth-{view.depth} pool"
        except JudgepoolError:
            left = "holes left unknown"
        st.warning(
            md(f"Labels being written: {left} ({view.label}). {_who(activity)}")
            + " Every figure on this page is **provisional**: the next labels can change any of "
            "them and can flip a verdict; read it again when the judge is done."
        )
    elif activity.batches:
        pairs = sum(n for _, n in activity.batches)
        st.info(
            md(
                f"An open batch holds {pairs:,} pair{'s' * (pairs != 1)} ("
                + ", ".join(h for h, _ in activity.batches)
                + "): their labels arrive when it is collected, and the figures here can change "
                "then."
            )
        )


def ideal_caption(view: View, version: data.Version) -> None:
    """When judge labels count: why a run with no holes can still move."""
    try:
        judged = bool(data.judge_labellers(view.db, version, view.level))
    except JudgepoolError:
        return
    if judged:
        st.caption(
            f"Judge labels count in these figures. nDCG divides by the ideal ranking of all of a "
            f"query's labels (R and nR by its number of relevant docs), so a new relevant label "
            f"of a doc a run did not rank in its top {view.k} lowers that run's nDCG, even when "
            "the run has no holes: its ideal ranking got better, not its ranking worse."
        )


def _describe(s: Shift, k: int) -> str:
    parts = [
        f"{s.measure} of {s.run} moved {s.before:.3f} → {s.after:.3f} with no label written in "
        f"its top {k} since (holes there now: {s.holes})"
    ]
    if s.changed:
        listed = ", ".join(s.changed[:5]) + (" …" if len(s.changed) > 5 else "")
        parts.append(
            f"on {len(s.changed)} quer{'ies' if len(s.changed) != 1 else 'y'} ({listed}) new "
            "labels of docs it did not rank there changed the ideal ranking"
        )
    if s.entered:
        parts.append(
            f"{len(s.entered)} quer{'ies' if len(s.entered) != 1 else 'y'} joined its "
            "mean (a first doc at the measure's threshold)"
        )
    if s.left:
        parts.append(f"{len(s.left)} left it")
    return "; ".join(parts) + "."


def ideal_notes(view: View, version: data.Version, ev: EvaluationFigures, scope: str) -> None:
    """Where a mean moved since the first figures of this session, by labels outside the run's
    top k, say so (metrics.shift); the first figures are kept per page, runs, level, judge, k."""
    seen: dict[Any, tuple[data.Version, EvaluationFigures]] = st.session_state.setdefault(_SEEN, {})
    key = (scope, view.db, ev.runs, view.level, view.labeller, view.k)
    first = seen.get(key)
    if first is None or not changes.same_but_labels(first[0], version):
        seen[key] = (version, ev)  # the yardstick: nothing to explain yet
        return
    if first[0] == version:
        return
    try:
        touched = data.relabelled(view.db, version, ev.runs, view.level, view.k, first[0])
    except JudgepoolError:
        return
    shifts = changes.outside_shifts(first[1], ev, touched)
    if not shifts:
        return
    shown = [_describe(s, view.k) for s in shifts[:SHOWN_SHIFTS]]
    more = len(shifts) - len(shown)
    st.info(
        md(
            "Since this page first showed its figures, means moved although the runs' own top "
            f"{view.k} got no new label: "
            + " ".join(shown)
            + (f" ({more} more.)" if more > 0 else "")
            + " That is how nDCG, R and nR work: they compare a ranking with the best one the "
            "labels allow, and new relevant labels anywhere in the query raise that best."
        )
    )
