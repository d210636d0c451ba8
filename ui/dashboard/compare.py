"""Compare page: candidates against a baseline, paired over queries, behind the judged@k gate.

If a chosen run is under the gate, the page refuses: a banner names the runs with their judged@k
and holes and gives the exact `judgepool judge ...` command; no number is shown until the user
ticks "compare anyway", after which every figure is marked UNRELIABLE. Otherwise it shows each
measure's paired difference with its 95% interval, p-value and Holm-corrected verdict, the
per-query differences (sorted; a click on a bar, or the picker, opens that query's two rankings
side by side with each doc's label and its source).

A Streamlit page script (run by `st.navigation` with `__name__ == "__main__"`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.pooling.errors import JudgepoolError
from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.charts import PICK, delta_chart
from judgepool.ui.dashboard.compare_corrected import corrected_panel
from judgepool.ui.dashboard.view import View, md, render_page, safe_version, show_error

if TYPE_CHECKING:
    import pandas as pd

    from judgepool.metrics.compare import Comparison, Delta

UNRELIABLE = "UNRELIABLE"
ANYWAY = "compare_anyway"
QUERY = "compare_query"


def _reset_consent() -> None:
    """A new choice of runs needs a new, explicit "compare anyway"."""
    st.session_state[ANYWAY] = False


def verdict(d: Delta) -> str:
    """better / worse / no significant difference (Holm-corrected)."""
    if d.delta is None or d.p_holm is None:
        return "not tested (no query to average)"
    if not d.significant:
        return "no significant difference"
    return "better" if d.delta > 0 else "worse"


def deltas_table(cmp: Comparison) -> pd.DataFrame:
    """One row per candidate x measure."""
    import pandas as pd

    rows = []
    for d in cmp.deltas:
        row: dict[str, Any] = {
            "candidate": d.candidate,
            "measure": d.measure,
            "queries": d.n,
            "difference": None if d.delta is None else round(d.delta, 4),
            "95% interval": "–" if d.ci95 is None else f"[{d.ci95[0]:+.4f}, {d.ci95[1]:+.4f}]",
            "p": None if d.p is None else round(d.p, 4),
            "p (Holm)": None if d.p_holm is None else round(d.p_holm, 4),
            "verdict": verdict(d),
        }
        if cmp.unreliable:  # forced past the gate: nothing in this table is reliable
            why = "a run under the gate" if d.unreliable else "forced comparison"
            row["reliability"] = f"{UNRELIABLE} ({why})"
        rows.append(row)
    return pd.DataFrame(rows)


def per_query_rows(
    cmp: Comparison, candidate: str, measure: str, texts: dict[str, str]
) -> list[dict[str, Any]]:
    """(qid, delta, outcome, text) for each query the measure averages, largest gain first."""
    ev = cmp.evaluation
    values = ev.values[measure]
    kept = ev.averaged[measure]
    base, cand = ev.run_index(cmp.baseline), ev.run_index(candidate)
    found: list[tuple[float, str]] = [
        (float(values[cand, i] - values[base, i]), qid) for i, qid in enumerate(ev.qids) if kept[i]
    ]
    found.sort(key=lambda x: (-x[0], x[1]))
    return [
        {
            "qid": qid,
            "delta": delta,
            "outcome": "win" if delta > 1e-12 else "loss" if delta < -1e-12 else "tie",
            "text": texts.get(qid, ""),
        }
        for delta, qid in found
    ]


def refusal_banner(cmp: Comparison) -> None:
    """Who is under the gate, by how much, and the command that fixes it."""
    from judgepool.metrics.gate import describe

    k = cmp.evaluation.k
    listing = "; ".join(describe(r, k, cmp.gate) for r in cmp.refused)
    st.error(
        md(
            f"Comparison refused: {len(cmp.refused)} run(s) under the judged@{k} gate of "
            f"{cmp.gate:g} ({listing}). Their unlabelled docs count as non-relevant, so "
            "their scores are too low to compare."
        )
    )
    if cmp.command is not None:
        st.markdown("Fill the holes with this command (`MODEL` = a litellm model string):")
        st.code(cmp.command, language="bash", wrap_lines=True)
    if any(r.missing for r in cmp.refused):
        st.markdown(
            "A run that returned nothing for a query scores 0 on it, and no judge can fix that: "
            "check that the run names queries as the labels do (the Runs page warns when it "
            "misses most of them), and ingest it again."
        )


def rankings_side_by_side(view: View, version: data.Version, cmp: Comparison, cand: str) -> None:
    """The two rankings of the picked query, each doc with its effective label and source."""
    import pandas as pd

    qid = st.session_state.get(QUERY)
    if not qid:
        return
    texts = data.query_texts(view.db, version)
    runs = (cmp.baseline, cand)
    ranked = data.rankings(view.db, version, runs, str(qid), view.level, view.labeller, view.k)
    st.text(f"query {qid}: {texts.get(str(qid), '(no text)')}")
    for column, run in zip(st.columns(2), runs, strict=True):
        frame = pd.DataFrame(
            [
                {
                    "rank": r.rank,
                    "doc_id": r.doc_id,
                    "grade": r.grade,
                    "source": r.source or "hole (no label)",
                    "labeller": r.labeller or "",
                }
                for r in ranked.get(run, [])
            ],
            columns=["rank", "doc_id", "grade", "source", "labeller"],
        )
        with column:
            st.text(f"{'baseline' if run == cmp.baseline else 'candidate'}: {run}")
            st.dataframe(frame, hide_index=True, key=f"compare_ranking_{run == cmp.baseline}")


def figures(view: View, version: data.Version, cmp: Comparison) -> None:
    """Differences, the per-query chart and the drill-down."""
    mark = f"{UNRELIABLE} — " if cmp.unreliable else ""
    if cmp.unreliable:
        st.warning(
            md(
                f"{UNRELIABLE}: compared anyway although "
                + ", ".join(r.run for r in cmp.refused)
                + f" are under the judged@{cmp.evaluation.k} gate. Every figure below is "
                "marked unreliable."
            )
        )
    st.subheader(f"{mark}Paired differences from {md(cmp.baseline)} — {md(view.label)}")
    st.dataframe(
        deltas_table(cmp),
        hide_index=True,
        key="compare_deltas",
        column_config={
            "difference": st.column_config.NumberColumn(format="%+.4f"),
            "p": st.column_config.NumberColumn(format="%.4f"),
            "p (Holm)": st.column_config.NumberColumn(format="%.4f"),
        },
    )
    st.caption(
        f"Difference = candidate − baseline over the same queries; 95% interval: paired "
        f"bootstrap ({cmp.evaluation.resamples:,} resamples); p: paired randomisation test; "
        f"verdict: Holm-corrected over all {len(cmp.deltas)} comparisons at α = {cmp.alpha:g}."
    )
    corrected_panel(cmp)
    measures = [str(m) for m in cmp.evaluation.measures if m.kind != "Judged"]
    left, right = st.columns(2)
    cand = left.selectbox("Candidate", cmp.candidates, key="compare_chart_candidate")
    measure = right.selectbox("Measure", measures, key="compare_chart_measure")
    texts = data.query_texts(view.db, version)
    rows = per_query_rows(cmp, str(cand), str(measure), texts)
    wins = sum(r["outcome"] == "win" for r in rows)
    losses = sum(r["outcome"] == "loss" for r in rows)
    tally = f"{wins} win{'s' * (wins != 1)}, {losses} loss{'es' * (losses != 1)}"
    title = f"{mark}{cand} − {cmp.baseline}: {measure} per query ({tally})"
    event = st.altair_chart(
        delta_chart(rows, title, view.label, str(measure)),
        on_select="rerun",
        selection_mode=PICK,
        key="compare_chart",
    )
    picked = _picked_qid(event)
    if picked and picked != st.session_state.get("_compare_last_pick"):
        st.session_state["_compare_last_pick"] = picked
        st.session_state[QUERY] = picked
    qids = [r["qid"] for r in rows]
    if st.session_state.get(QUERY) not in qids:
        st.session_state.pop(QUERY, None)
    st.selectbox(
        "Query (click a bar, or pick one)",
        qids,
        index=None,
        key=QUERY,
        format_func=lambda q: f"{q}  ({next(r['delta'] for r in rows if r['qid'] == q):+.3f})",
    )
    rankings_side_by_side(view, version, cmp, str(cand))


def _picked_qid(event: Any) -> str | None:
    try:
        points = event["selection"][PICK]
    except (KeyError, TypeError):
        return None
    if isinstance(points, list) and points and isinstance(points[0], dict):
        qid = points[0].get("qid")
        return None if qid is None else str(qid)
    return None


def _from_link(runs: list[str]) -> None:
    """Once per session, take the runs and query from the URL, so a comparison can be linked:
    /compare?baseline=A&candidate=B&candidate=C&query=QID (unknown runs are ignored)."""
    if st.session_state.get("_compare_linked"):
        return
    st.session_state["_compare_linked"] = True
    params = st.query_params
    if params.get("baseline") in runs:
        st.session_state["compare_baseline"] = params["baseline"]
    linked = [c for c in params.get_all("candidate") if c in runs]
    if linked:
        st.session_state["compare_candidates"] = linked
    if params.get("query"):
        st.session_state[QUERY] = params["query"]


def body(view: View) -> None:
    """Pick runs, check the gate, show the comparison (refreshed by the fragment)."""
    version = safe_version(view.db)
    if version is None:
        return
    try:
        runs = data.run_names(view.db, version)
    except JudgepoolError as err:
        show_error(err)
        return
    if len(runs) < 2:
        st.info("Comparing needs two runs: ingest another with `judgepool ingest run FILE`.")
        return
    _from_link(runs)
    left, right = st.columns([1, 2])
    baseline = left.selectbox("Baseline", runs, key="compare_baseline", on_change=_reset_consent)
    others = [r for r in runs if r != baseline]
    chosen = [c for c in st.session_state.get("compare_candidates", []) if c in others]
    st.session_state["compare_candidates"] = chosen or others[:1]
    candidates = right.multiselect(
        "Candidates", others, key="compare_candidates", on_change=_reset_consent
    )
    if not candidates:
        st.info("Pick at least one candidate.")
        return
    force = bool(st.session_state.get(ANYWAY, False))
    try:
        cmp = data.comparison(
            view.db,
            version,
            str(baseline),
            tuple(candidates),
            view.level,
            view.labeller,
            view.k,
            force,
        )
    except JudgepoolError as err:
        show_error(err)
        return
    if cmp.refused:
        refusal_banner(cmp)
        st.checkbox(
            "Compare anyway (every figure will be marked UNRELIABLE)", key=ANYWAY, value=False
        )
        if not force:
            st.info("No figures are shown for a refused comparison.")
            return
    figures(view, version, cmp)


def render() -> None:
    """Draw the page."""
    render_page("Compare", body)


if __name__ == "__main__":
    render()
