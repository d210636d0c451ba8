"""The dashboard's charts (Altair): means with interval bars, per-query differences, confusion.

Each builder takes plain rows, a title and a subtitle; the caller puts the level in the subtitle
(and UNRELIABLE, when a comparison was forced past the gate, in the title), so no chart is ever
read without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

PICK = "pick"  # the point-selection parameter of the per-query chart (a click picks a query)
OUTCOME_COLOURS = {"win": "#2e7d32", "loss": "#c62828", "tie": "#9e9e9e"}


def _title(title: str, subtitle: str) -> Any:
    return alt.TitleParams(text=title, subtitle=subtitle, anchor="start")


def means_chart(rows: Sequence[dict[str, Any]], title: str, subtitle: str) -> Any:
    """One panel per measure: each run's mean (point) and 95% interval (bar)."""
    frame = pd.DataFrame(rows, columns=["run", "measure", "mean", "low", "high"])
    base = alt.Chart(frame).encode(
        y=alt.Y("run:N", title=None, sort=None, axis=alt.Axis(labelLimit=320)),
        tooltip=[
            "run",
            "measure",
            alt.Tooltip("mean:Q", format=".3f"),
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
        ],
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="mean with 95% interval", scale=alt.Scale(zero=False)),
        x2="high:Q",
    )
    points = base.mark_point(filled=True, size=70).encode(x="mean:Q")
    return (
        alt.layer(bars, points, data=frame)
        .properties(width=200, height=alt.Step(22))
        .facet(
            column=alt.Column("measure:N", title=None, sort=list(dict.fromkeys(frame["measure"])))
        )
        .resolve_scale(x="independent")
        .properties(title=_title(title, subtitle))
    )


def delta_chart(rows: Sequence[dict[str, Any]], title: str, subtitle: str, measure: str) -> Any:
    """Per-query difference (candidate - baseline) in the order of `rows` (the HTML report's),
    wins and losses coloured; a click on a bar selects that query (selection parameter `PICK`,
    field `qid`)."""
    frame = pd.DataFrame(rows, columns=["qid", "delta", "outcome", "text"])
    pick = alt.selection_point(name=PICK, fields=["qid"], on="click")
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X(
                "qid:N",
                sort=list(frame["qid"]),
                title="query (sorted by difference)",
                axis=alt.Axis(labels=len(frame) <= 60),
            ),
            y=alt.Y("delta:Q", title=f"{measure} difference"),
            color=alt.Color(
                "outcome:N",
                scale=alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values())),
                legend=alt.Legend(title=None, orient="top"),
            ),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.45)),
            tooltip=["qid", alt.Tooltip("delta:Q", format="+.3f"), "text"],
        )
        .add_params(pick)
        .properties(title=_title(title, subtitle), height=320)
    )


def confusion_chart(matrix: Sequence[Sequence[int]], title: str, subtitle: str) -> Any:
    """Heatmap of counts: rows the human's grade, columns the judge's."""
    rows = [
        {"human": str(h), "judge": str(j), "pairs": int(n)}
        for h, line in enumerate(matrix)
        for j, n in enumerate(line)
    ]
    frame = pd.DataFrame(rows)
    base = alt.Chart(frame).encode(
        x=alt.X("judge:O", title="judge grade"),
        y=alt.Y("human:O", title="human grade"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("pairs:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["human", "judge", "pairs"],
    )
    numbers = base.mark_text(fontSize=14).encode(
        text="pairs:Q",
        color=alt.condition(
            alt.datum.pairs > frame["pairs"].max() / 2, alt.value("white"), alt.value("black")
        ),
    )
    return (cells + numbers).properties(title=_title(title, subtitle), width=260, height=220)
