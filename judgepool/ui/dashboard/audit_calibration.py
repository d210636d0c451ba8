"""The Audit page's calibration panel: every `judgepool calibrate` run at the level, and one run's
figures as sampled and re-weighted to the pool's grade mix, with its confusion matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from judgepool.ui.dashboard import trust_data
from judgepool.ui.dashboard.charts import confusion_chart
from judgepool.ui.dashboard.view import View, md

if TYPE_CHECKING:
    from judgepool.api.audit_queue import CalibrationRun
    from judgepool.ui.dashboard.data import Version

FIGURES = (
    ("pairs", "pairs"),
    ("exact agreement", "exact"),
    ("Cohen's κ (0-3)", "kappa"),
    ("quadratic-weighted κ", "kappa_quadratic"),
    ("Krippendorff's α (ordinal)", "alpha_ordinal"),
    ("lenient: P(judge ≥ 2 | human < 2)", "lenient_rate"),
    ("strict: P(judge < 2 | human ≥ 2)", "strict_rate"),
)


def _num(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)


def _figures(side: dict[str, Any]) -> dict[str, float | None]:
    found = {label: _num(side.get(key)) for label, key in FIGURES}
    for t in ("1", "2", "3"):
        found[f"Cohen's κ (grade ≥ {t})"] = _num(side.get("kappa_at_least", {}).get(t))
    for g, rate in enumerate(side.get("hit_rate", [])):
        found[f"hit rate, human grade {g}"] = _num(rate)
    return found


def _summary(run: CalibrationRun) -> dict[str, Any]:
    fig = (run.figures.get("figures") or {}).get("population") or {}
    return {
        "run": run.id,
        "when": run.created_at,
        "judge": run.labeller,
        "prompt": run.prompt_hash or "",
        "pairs": run.pairs,
        "seed": run.seed,
        "exact (pool mix)": _num(fig.get("exact")),
        "κ (pool mix)": _num(fig.get("kappa")),
        "α ordinal (pool mix)": _num(fig.get("alpha_ordinal")),
        "failures": sum((run.figures.get("failures") or {}).values()),
        "cost $": run.figures.get("cost"),
    }


def calibration_panel(view: View, version: Version) -> None:
    """Runs at the level, and the chosen run's figures."""
    import pandas as pd

    runs = trust_data.calibrations(view.db, version, view.level)
    with st.expander(
        f"Calibration runs — {len(runs)} at the {view.level} level", expanded=bool(runs)
    ):
        if not runs:
            st.info(
                "No calibration yet: re-judge pairs people labelled with "
                "`judgepool calibrate --model MODEL --sample 200`."
            )
            return
        st.dataframe(
            pd.DataFrame([_summary(r) for r in runs]), hide_index=True, key="calibration_runs"
        )
        chosen = st.selectbox(
            "Calibration run",
            [r.id for r in runs],
            key="calibration_run",
            format_func=lambda i: f"#{i}",
        )
        run = next(r for r in runs if r.id == chosen)
        found = run.figures.get("figures")
        if not found:
            st.warning("This run graded no pair: there is no figure to show.")
            return
        sample, pool = _figures(found["sample"]), _figures(found["population"])
        left, right = st.columns([3, 2])
        left.dataframe(
            pd.DataFrame(
                {
                    "figure": list(sample),
                    "sample": list(sample.values()),
                    "pool mix": [pool[k] for k in sample],
                }
            ),
            hide_index=True,
            key="calibration_figures",
        )
        left.caption(
            md(
                f"Sample: {run.pairs} pairs drawn with seed {run.seed}, stratified by human grade "
                f"({' / '.join(map(str, run.figures.get('sample_counts', [])))}); pool mix: each "
                "grade's row re-weighted to its share of the pool's human-labelled pairs "
                f"({' / '.join(map(str, run.figures.get('pool_counts', [])))})."
            )
        )
        matrix = [[int(x) for x in row] for row in found["sample"]["confusion"]]
        right.altair_chart(
            confusion_chart(matrix, f"Calibration #{run.id}: human vs judge", run.labeller),
            key="calibration_confusion",
        )
