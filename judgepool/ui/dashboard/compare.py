"""Compare page: candidates against a baseline, paired over queries, behind the judged@k gate.

If a chosen run is under the gate, the page refuses: a banner names the runs with their judged@k
and holes and gives the exact `judgepool judge ...` command; no number is shown until the user
ticks "compare anyway", after which every figure is marked UNRELIABLE. Otherwise it shows each
run's own means with intervals, significance markers and bounds (compare_tables.py) beside each
measure's paired difference with its 95% interval, p-value and Holm-corrected verdict, the
per-query differences (sorted; a click on a bar, or the picker, opens that query's two rankings
side by side, holes marked, each doc's text on demand: compare_rankings.py). While a judge
writes labels, every verdict is marked provisional. The runs, measure and query are in the URL.

A Streamlit page script (run by `st.navigation` with `__name__ == "__main__"`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.errors import JudgepoolError
from judgepool.reports.command_line import command_line
from judgepool.reports.data import query_differences
from judgepool.ui.dashboard import data, links, live
from judgepool.ui.dashboard.charts import PICK, delta_chart
from judgepool.ui.dashboard.compare_corrected import corrected_panel
from judgepool.ui.dashboard.compare_rankings import rankings_side_by_side
from judgepool.ui.dashboard.compare_tables import (
    UNRELIABLE,
    bounds_table,
    deltas_table,
    effectiveness,
    holm_note,
    means_caption,
    means_table,
)
from judgepool.ui.dashboard.page import render_page
from judgepool.ui.dashboard.view import View, md, safe_version, show_error

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures

ANYWAY = "compare_anyway"
QUERY = "compare_query"
BASELINE, CANDIDATES = "compare_baseline", "compare_candidates"
CHART_CANDIDATE, MEASURE = "compare_chart_candidate", "compare_chart_measure"


def _reset_consent() -> None:
    """A new choice of runs needs a new, explicit "compare anyway"."""
    st.session_state[ANYWAY] = False


def per_query_rows(
    cmp: ComparisonFigures, candidate: str, measure: str, texts: dict[str, str]
) -> list[dict[str, Any]]:
    """(qid, delta, outcome, text) for each query the measure averages, in the HTML report's
    order (reports.data.query_differences: the largest gain first)."""
    return [
        {
            "qid": qid,
            "delta": delta,
            "outcome": "win" if delta > 1e-12 else "loss" if delta < -1e-12 else "tie",
            "text": texts.get(qid, ""),
        }
        for qid, delta in query_differences(cmp, candidate, measure)
    ]


def _runs_are(count: int) -> str:
    """`1 run is`, `2 runs are`."""
    return "1 run is" if count == 1 else f"{count} runs are"


def refusal_banner(cmp: ComparisonFigures) -> None:
    """Who is under the gate, by how much, and the command that fixes it."""
    from judgepool.metrics.gate import describe

    k = cmp.evaluation.k
    listing = "; ".join(describe(r, k, cmp.gate) for r in cmp.refused)
    st.error(
        md(
            f"Comparison refused: {_runs_are(len(cmp.refused))} under the judged@{k} gate of "
            f"{cmp.gate:g} ({listing}). Their unlabelled docs count as non-relevant, so "
            "their scores are too low to compare."
        )
    )
    if cmp.command is not None:
        st.markdown(
            "Fill the holes with this command (`MODEL`: `offline` for the local judge, no key "
            "and no cost, or a litellm model such as `openai/gpt-4o-mini`):"
        )
        st.code(command_line(cmp.command), language="bash", wrap_lines=True)
    if any(r.missing for r in cmp.refused):
        st.markdown(
            "A run that returned nothing for a query scores 0 on it, and no judge can fix that: "
            "check that the run names queries as the labels do (the Runs page warns when it "
            "misses most of them), and ingest it again."
        )


def means(view: View, version: data.Version, cmp: ComparisonFigures, mark: str) -> None:
    """Each compared run's own figures (ranx-style), and why they may move."""
    st.subheader(f"{mark}Means with 95% intervals — {md(view.label)}")
    st.dataframe(means_table(cmp), hide_index=True, key="compare_means")
    st.dataframe(bounds_table(cmp), hide_index=True, key="compare_bounds")
    st.caption(md(means_caption(cmp)))
    live.ideal_caption(view, version)
    live.ideal_notes(view, version, cmp.evaluation, "compare")


def differences(view: View, cmp: ComparisonFigures, mark: str) -> None:
    """The paired differences table and its caption, then the judge-corrected (PPI++) intervals
    of the same differences beside the plain ones (compare_corrected.py)."""
    provisional = live.writing(view.db)
    st.subheader(f"{mark}Paired differences from {md(cmp.baseline)} — {md(view.label)}")
    st.dataframe(
        deltas_table(cmp, provisional),
        hide_index=True,
        key="compare_deltas",
        column_config={
            "difference": st.column_config.NumberColumn(format="%+.4f"),
        },
    )
    st.caption(
        f"Difference = candidate − baseline over the same queries; 95% interval: paired "
        f"bootstrap ({cmp.evaluation.resamples:,} resamples); p: paired randomisation test "
        "(< x: no sign flip was as extreme, the p is under x); "
        f"verdict: Holm-corrected over all {len(cmp.deltas)} comparisons at α = {cmp.alpha:g}."
    )
    if provisional:
        k = cmp.evaluation.k
        holes = ", ".join(
            f"{run} {cmp.evaluation.summaries[run].holes}"
            for run in (cmp.baseline, *cmp.candidates)
        )
        st.warning(
            md(
                f"Provisional: a judge is writing labels. Holes in the compared runs' top {k} "
                f"now: {holes}. Each label can move these differences and flip a verdict."
            )
        )
    corrected_panel(cmp)


def figures(view: View, version: data.Version, cmp: ComparisonFigures) -> None:
    """Means, differences, the per-query chart and the drill-down."""
    mark = f"{UNRELIABLE} — " if cmp.unreliable else ""
    if cmp.unreliable:
        st.warning(
            md(
                f"{UNRELIABLE}: compared anyway although "
                + ", ".join(r.run for r in cmp.refused)
                + f" {'is' if len(cmp.refused) == 1 else 'are'} under the "
                f"judged@{cmp.evaluation.k} gate. Every figure below is "
                "marked unreliable."
            )
        )
    means(view, version, cmp, mark)
    differences(view, cmp, mark)
    measures = effectiveness(cmp)
    _keep_valid(CHART_CANDIDATE, cmp.candidates, "candidate in this comparison", "chart")
    _keep_valid(MEASURE, measures, "measure in this comparison", "measure")
    left, right = st.columns(2)
    cand = left.selectbox("Candidate", cmp.candidates, key=CHART_CANDIDATE)
    measure = right.selectbox("Measure", measures, key=MEASURE)
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
    _keep_valid(QUERY, qids, f"query that {measure} averages here", "query")
    qid = st.selectbox(
        "Query (click a bar, or pick one)",
        qids,
        index=None,
        key=QUERY,
        format_func=lambda q: f"{q}  ({next(r['delta'] for r in rows if r['qid'] == q):+.3f})",
    )
    if qid:
        rankings_side_by_side(view, version, cmp, str(cand), str(qid))


def _keep_valid(key: str, options: list[str] | tuple[str, ...], what: str, name: str) -> None:
    """Drop a remembered choice that is no longer an option (say so if a link made it); a
    measure whose cutoff changed with k stays the same measure at the new cutoff."""
    value = st.session_state.get(key)
    if value is not None and value not in options:
        family = str(value).rsplit("@", 1)[0]
        same = [o for o in options if key == MEASURE and o.rsplit("@", 1)[0] == family]
        if same:
            st.session_state[key] = same[0]
            return
        st.session_state.pop(key)
        if st.session_state.pop(f"_linked_{key}", False):
            links.left_out(name, str(value), f"it is not a {what}")


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
    """Once per session, take the runs, measure and query from the URL (links.py):
    /compare?baseline=A&candidate=B&candidate=C&measure=nDCG@10&chart=B&query=QID."""
    if not links.first_time("compare"):
        return
    links.take_choice("baseline", BASELINE, runs, "run")
    wanted = links.linked_all("candidate")
    for name in wanted:
        if name not in runs:
            links.left_out("candidate", name, "this database has no such run")
    linked = [c for c in dict.fromkeys(wanted) if c in runs]
    if linked:
        st.session_state[CANDIDATES] = linked
    for name, key in (("chart", CHART_CANDIDATE), ("measure", MEASURE), ("query", QUERY)):
        value = links.linked(name)
        if value is not None:  # checked once the comparison says what it may be (_keep_valid)
            st.session_state[key] = value
            st.session_state[f"_linked_{key}"] = True


def _open_on_a_comparable_pair(view: View, version: data.Version, runs: list[str]) -> None:
    """Once per session, when no link chose the runs: the most recent pair the gate lets
    through (data.opening_pair); a refused pair still shows its refusal when picked."""
    if st.session_state.get("_compare_opened"):
        return
    st.session_state["_compare_opened"] = True
    if st.session_state.get(BASELINE) is not None or st.session_state.get(CANDIDATES):
        return
    try:
        pair = data.opening_pair(view.db, version, view.level, view.labeller, view.k)
    except JudgepoolError:
        return  # the comparison below says what is wrong
    if pair is not None and pair[0] in runs and pair[1] in runs:
        st.session_state[BASELINE], st.session_state[CANDIDATES] = pair[0], [pair[1]]


def link() -> links.Params:
    """This page's part of the URL: what is chosen now."""
    state = st.session_state
    chosen = {
        "baseline": [state.get(BASELINE)],
        "candidate": list(state.get(CANDIDATES) or []),
        "chart": [state.get(CHART_CANDIDATE)],
        "measure": [state.get(MEASURE)],
        "query": [state.get(QUERY)],
    }
    return {name: [str(v) for v in values if v] for name, values in chosen.items()}


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
    _open_on_a_comparable_pair(view, version, runs)
    left, right = st.columns([1, 2])
    baseline = left.selectbox("Baseline", runs, key=BASELINE, on_change=_reset_consent)
    others = [r for r in runs if r != baseline]
    chosen = [c for c in st.session_state.get(CANDIDATES, []) if c in others]
    st.session_state[CANDIDATES] = chosen or others[:1]
    candidates = right.multiselect("Candidates", others, key=CANDIDATES, on_change=_reset_consent)
    note = right.empty()
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
    note.caption(holm_note(len(cmp.candidates), len(effectiveness(cmp))))
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
    render_page("Compare", body, link)


if __name__ == "__main__":
    render()
