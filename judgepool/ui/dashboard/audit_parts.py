"""Pieces of the Audit page: the agreement panel, the audit sample, one label's provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from judgepool.api import browse
from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.charts import confusion_chart
from judgepool.ui.dashboard.view import View, md

if TYPE_CHECKING:
    from judgepool.api.browse import LabelDetail

SAMPLE = "audit_sample"


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _rate(count: int, rate: float | None) -> str:
    return f"{count}" if rate is None else f"{count} ({rate:.1%})"


def agreement_panel(view: View, version: data.Version) -> None:
    """Counts, kappas, leniency and the confusion heatmap on pairs labelled by both."""
    ag = data.agreement(view.db, version, view.level, view.labeller)
    who = "any judge" if view.labeller is None else f"judge {view.labeller}"
    with st.expander(
        md(
            f"Judge vs human agreement — {ag.pairs} pairs labelled by both ({view.level} level, "
            f"{who})"
        ),
        expanded=ag.pairs > 0,
    ):
        if ag.pairs == 0:
            st.info(
                "No pair has both a human and a judge label at this level yet: override some "
                "judge labels below (or draw an audit sample) to measure agreement."
            )
            return
        left, right = st.columns([3, 2])
        with left:
            a, b, c = st.columns(3)
            a.metric("Pairs", ag.pairs)
            b.metric("Exact agreement", _num(ag.exact))
            c.metric("Cohen's κ (0-3)", _num(ag.kappa))
            d, e, f = st.columns(3)
            d.metric("Cohen's κ (grade ≥ 2)", _num(ag.kappa_binary))
            e.metric("Quadratic-weighted κ", _num(ag.kappa_quadratic))
            f.metric("Excluded (grade not 0-3)", ag.excluded)
            g, h = st.columns(2)
            g.metric("Lenient: judge ≥ 2, human < 2", _rate(ag.lenient, ag.lenient_rate))
            h.metric("Strict: judge < 2, human ≥ 2", _rate(ag.strict, ag.strict_rate))
            st.caption(
                "Lenient rate: share of the human's not-relevant (< 2) pairs the judge called "
                "relevant; strict rate: share of the human's relevant pairs it did not."
            )
        with right:
            st.altair_chart(
                confusion_chart(ag.confusion, "Human vs judge grades", f"{view.level} level"),
                key="audit_confusion",
            )


def _draw(db: str, level: Level, labeller: str | None) -> None:
    """Button callback: draw the seeded, stratified sample."""
    from judgepool.reports.command_line import cli_words

    try:
        drawn = browse.judge_sample(
            Store(db),
            int(st.session_state.get("audit_per_grade", 10)),
            int(st.session_state.get("audit_seed", 1)),
            level=level,
            labeller=labeller,
        )
    except JudgepoolError as err:
        st.session_state["_audit_flash"] = ("error", err.say(cli_words)[0])  # as the CLI says it
        return
    st.session_state[SAMPLE] = [(s.qid, s.doc_id, s.judge_grade) for s in drawn]


def _open(pair_key: str, pair: tuple[str, str]) -> None:
    st.session_state[pair_key] = pair


def sample_panel(view: View, version: data.Version, pair_key: str) -> list[tuple[str, str]]:
    """The "sample to audit" control and the progress through the drawn sample."""
    import pandas as pd

    drawn = bool(st.session_state.get(SAMPLE))
    with st.expander(
        "Sample of pairs to check (stratified by judge grade, seeded)", expanded=drawn
    ):
        a, b, c = st.columns([1, 1, 2])
        a.number_input("Pairs per judge grade", 1, 1000, 10, key="audit_per_grade")
        b.number_input("Seed", 0, 2**31 - 1, 1, key="audit_seed")
        c.button(
            "Draw sample",
            key="audit_draw",
            on_click=_draw,
            args=(view.db, view.level, view.labeller),
        )
        sample = [tuple(s) for s in st.session_state.get(SAMPLE, [])]
        if not sample:
            st.caption("Draw a sample to get a list of judge labels to check, one per row.")
            return []
        pairs = tuple((str(q), str(d)) for q, d, _ in sample)
        done = data.audited(view.db, version, pairs, view.level)
        st.progress(
            len(done) / len(pairs),
            text=f"{len(done)} of {len(pairs)} sampled pairs have a human label",
        )
        todo = [p for p in pairs if p not in done]
        st.button(
            "Open the next unaudited pair",
            key="audit_next",
            disabled=not todo,
            on_click=_open,
            args=(pair_key, todo[0] if todo else pairs[0]),
        )
        st.dataframe(
            pd.DataFrame(
                [
                    {"qid": q, "doc_id": d, "judge grade": g, "audited": (q, d) in done}
                    for q, d, g in sample
                ],
                columns=["qid", "doc_id", "judge grade", "audited"],
            ),
            hide_index=True,
            height=180,
            key="audit_sample_table",
        )
        return list(pairs)


def label_detail(label: LabelDetail, effective: bool) -> None:
    """One label: who, what grade, status, and (expanded) its raw output and provenance."""
    grade = "no grade" if label.grade is None else f"grade {label.grade}"
    mark = "EFFECTIVE · " if effective else ""
    title = f"{mark}#{label.id} {label.source} {label.labeller}: {grade} ({label.status})"
    with st.expander(md(title), expanded=effective):
        st.text(f"written {label.created_at}")
        costs = [
            f"{name} {value}"
            for name, value in (
                ("tokens in", label.tokens_in),
                ("tokens out", label.tokens_out),
                ("cost $", label.cost),
                ("latency s", label.latency_s),
            )
            if value is not None
        ]
        if costs:
            st.text(", ".join(costs))
        if label.note:
            st.caption("note")
            st.text(label.note)
        st.caption("raw output")
        raw = label.raw_output if label.raw_output is not None else "(none)"
        st.code(raw, language=None, wrap_lines=True)
        st.caption("provenance")
        st.json(label.provenance if label.provenance is not None else {}, expanded=False)
