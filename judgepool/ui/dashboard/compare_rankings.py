"""Compare page: one query's two rankings side by side, holes marked, each doc's text on demand.

A hole (a doc in the top k with no effective label) counts as non-relevant in every measure, so
it must not look like a grade: its grade reads HOLE, its row is tinted, and a line above each
ranking counts them with their ranks. A click on a row, or the picker under the table, shows that
doc's text (st.text: data is never rendered as Markdown or HTML) with its label.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.view import View, md

if TYPE_CHECKING:
    import pandas as pd

    from judgepool.api.browse import RankedDoc
    from judgepool.metrics.compare import ComparisonFigures

HOLE = "HOLE"
HOLE_SOURCE = "hole: no label (counts as non-relevant)"
HOLE_COLOUR = "#ffe0b2"
SIDES = ("baseline", "candidate")


def ranking_frame(ranked: Sequence[RankedDoc]) -> pd.DataFrame:
    """rank, doc_id, grade (HOLE for a hole), source, labeller: all text but the rank."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "rank": r.rank,
                "doc_id": r.doc_id,
                "grade": HOLE if r.grade is None else str(r.grade),
                "source": r.source or HOLE_SOURCE,
                "labeller": r.labeller or "",
            }
            for r in ranked
        ],
        columns=["rank", "doc_id", "grade", "source", "labeller"],
    )


def hole_line(ranked: Sequence[RankedDoc], k: int) -> str:
    """`3 holes in its top 10 (ranks 4, 7, 9): ...`, or that there is none."""
    ranks = [r.rank for r in ranked if r.grade is None]
    if not ranks:
        return f"No hole in its top {k}: every doc has a label."
    listed = ", ".join(map(str, ranks))
    return (
        f"{len(ranks)} hole{'s' * (len(ranks) != 1)} in its top {k} (rank{'s' * (len(ranks) != 1)} "
        f"{listed}): unlabelled, counted as non-relevant, so its figures here are a lower bound."
    )


def _tint_holes(row: pd.Series) -> list[str]:
    hole = row["grade"] == HOLE
    return [f"background-color: {HOLE_COLOUR}; color: black" if hole else ""] * len(row)


def _pick_row(side: str, doc_ids: list[str]) -> None:
    """Table selection callback: read the selected row's doc."""
    state: Any = st.session_state.get(f"compare_ranking_{side}")
    try:
        rows = state["selection"]["rows"]
    except (KeyError, TypeError, AttributeError):
        return
    if rows and 0 <= rows[0] < len(doc_ids):
        st.session_state[f"compare_read_{side}"] = doc_ids[rows[0]]


def _describe(r: RankedDoc) -> str:
    label = HOLE if r.grade is None else f"grade {r.grade} ({r.source})"
    return f"#{r.rank} {r.doc_id} — {label}"


def _describe_id(by_id: dict[str, RankedDoc], doc_id: str) -> str:
    return _describe(by_id[doc_id])


def doc_text(view: View, version: data.Version, qid: str, r: RankedDoc) -> None:
    """The doc's text (its chunks at the doc level) and its label, as plain text."""
    detail = data.pair(view.db, version, qid, r.doc_id, view.level, view.labeller)
    if r.grade is None:
        st.caption("HOLE: no label yet; every measure counts it as non-relevant.")
    else:
        st.caption(md(f"grade {r.grade}, {r.source} label by {r.labeller}"))
    if not detail.passages:
        st.text("(no text for this doc)")
    for chunk_id, text in detail.passages:
        if view.level == "doc":
            st.caption(md(chunk_id))
        st.text(text if text is not None else "(no text)")


def rankings_side_by_side(
    view: View, version: data.Version, cmp: ComparisonFigures, cand: str, qid: str
) -> None:
    """The two rankings of `qid`, each doc with its effective label and source, holes marked."""
    texts = data.query_texts(view.db, version)
    runs = (cmp.baseline, cand)
    ranked = data.rankings(view.db, version, runs, qid, view.level, view.labeller, view.k)
    st.text(f"query {qid}: {texts.get(qid, '(no text)')}")
    for column, run, side in zip(st.columns(2), runs, SIDES, strict=True):
        docs = ranked.get(run, [])
        by_id = {r.doc_id: r for r in docs}
        doc_ids = list(by_id)
        read = f"compare_read_{side}"
        if st.session_state.get(read) not in by_id:
            st.session_state.pop(read, None)
        with column:
            st.text(f"{side}: {run}")
            st.caption(hole_line(docs, view.k))
            st.dataframe(
                ranking_frame(docs).style.apply(_tint_holes, axis=1),
                hide_index=True,
                key=f"compare_ranking_{side}",
                on_select=partial(_pick_row, side, doc_ids),
                selection_mode="single-row",
            )
            picked = st.selectbox(
                "Read a doc (click a row, or pick one)",
                doc_ids,
                index=None,
                key=read,
                format_func=partial(_describe_id, by_id),
            )
            if picked is not None:
                doc_text(view, version, qid, by_id[str(picked)])
