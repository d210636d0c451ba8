"""Reports as plain data: the JSON object of `eval` / `compare`, and rows for tables and CSV.

The JSON object (one per call) is::

    {"level": "chunk", "judge": null, "k": 10, "queries": 43,
     "average": "defined" | "trec_eval",           # which queries the means are over
     "averaged": {MEASURE: n},                     # queries in each measure's mean
     "left_out": {MEASURE: [QID, ...]},            # evaluation-set queries not in that mean
     "runs": {RUN: {"queries": n, "missing": m, "judged": x, "holes": h,
                    "n": {MEASURE: n}, "mean": {MEASURE: x}, "ci95": {MEASURE: [lo, hi]},
                    "bounds": {MEASURE: [holes_0, holes_top]} | null,
                    "per_query": {QID: {MEASURE: x | null}}}},
     "comparisons": [{"baseline", "candidate", "measure", "n", "delta", "ci95": [lo, hi],
                      "p", "p_holm", "significant", "unreliable"}],
     "refused": [{"run", "judged", "holes", "missing"}], "unreliable": bool,
     "gate": 0.9 | null, "judge_command": "..." | null,
     "warnings": ["run 'x' returned nothing for 43 of 43 evaluation-set queries ...", ...],
     "verdicts": {CANDIDATE: "better" | ...} | null,   # compare, from judgepool/reports/ci.py:
     "fail_on": {...} | null, "groups": {...} | null,   # --fail-on and --by group
     "audit": {...} | null,                        # judge-corrected side (corrected_report.py)
     "fooled_by_canaries": [{"labeller", "judge_run", "started_at", "threshold", "canaries",
                             "graded", "rates": {KIND: x | null}}],
     "by_judge": {...} | null}                     # compare --by-judge (metrics/by_judge.py)

MEASURE names are ir-measures' ("nDCG@k", "R(rel=3)@k", "nR@k", "Judged@k", "RR@10" ...). A value
that does not exist (a mean over no query, a query left out of a measure) is null, never 0. The
shape is defined once, by the pydantic models of judgepool/reports/model.py, and published as
docs/report.schema.json; the builders below write that shape directly (the models are not run at
run time, to keep pydantic out of the command's start-up) and the tests check every report they
print against the models, text for text (tests/report_shape.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgepool.reports.command_line import command_line
from judgepool.reports.corrected import audit_json, delta_fields, run_fields

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures, Delta
    from judgepool.metrics.evaluate import EvaluationFigures
    from judgepool.pooling.store.judge_runs import JudgeRunRow


def _pair(pair: tuple[float | None, float | None] | None) -> list[float | None] | None:
    return None if pair is None else [pair[0], pair[1]]


def evaluation_json(ev: EvaluationFigures, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON object of `judgepool eval` (`extra`: the --by group keys, reports.ci)."""
    return {**_evaluation_dict(ev), **(extra or {})}


def _evaluation_dict(ev: EvaluationFigures) -> dict[str, Any]:
    names = [str(m) for m in ev.measures]
    runs: dict[str, Any] = {}
    for run in ev.runs:
        s = ev.summaries[run]
        runs[run] = {
            "queries": len(ev.qids),
            "missing": s.missing,
            "judged": s.judged,
            "holes": s.holes,
            "n": {m: ev.n(m) for m in names},
            "mean": dict(s.mean),
            "ci95": {m: _pair(s.ci95[m]) for m in names},
            "bounds": None if s.bounds is None else {m: _pair(b) for m, b in s.bounds.items()},
            "per_query": ev.per_query(run),
            "ppi": run_fields(ev.corrected, run, names),
        }
    return {
        "level": ev.level,
        "judge": ev.labeller,
        "k": ev.k,
        "queries": len(ev.qids),
        "average": ev.average,
        "averaged": {m: ev.n(m) for m in names},
        "left_out": {m: ev.left_out(m) for m in names},
        "engines": {m: ev.engines.get(m, "judgepool") for m in names},
        "runs": runs,
        "comparisons": [],
        "refused": [],
        "unreliable": False,
        "gate": None,
        "judge_command": None,
        "warnings": list(ev.warnings),
        "verdicts": None,
        "fail_on": None,
        "groups": None,
        "audit": audit_json(ev.corrected),
        "fooled_by_canaries": [fooled_json(row) for row in ev.fooled],
        "by_judge": None,
    }


def fooled_json(row: JudgeRunRow) -> dict[str, Any]:
    """One fooled judge's canary check, as the report's `fooled_by_canaries` lists it."""
    return {
        "labeller": row.labeller,
        "judge_run": row.id or 0,
        "started_at": str(row.started_at),
        "threshold": row.canary_threshold or 0.0,
        "canaries": row.canaries,
        "graded": row.canaries_graded,
        "rates": row.rates(),
    }


def delta_json(d: Delta) -> dict[str, Any]:
    """One comparison as JSON."""
    return {
        "baseline": d.baseline,
        "candidate": d.candidate,
        "measure": d.measure,
        "n": d.n,
        "delta": d.delta,
        "ci95": _pair(d.ci95),
        "p": d.p,
        "p_holm": d.p_holm,
        "significant": d.significant,
        "unreliable": d.unreliable,
    }


def comparison_json(cmp: ComparisonFigures, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON object of `judgepool compare` (printed on a refusal too, with `refused` filled);
    `extra`: the verdicts, --fail-on and --by group keys (reports.ci)."""
    out = _evaluation_dict(cmp.evaluation)
    out["comparisons"] = [delta_json(d) | delta_fields(cmp.corrected, d) for d in cmp.deltas]
    out["audit"] = audit_json(cmp.corrected)
    out["refused"] = [
        {"run": r.run, "judged": float(r.judged), "holes": r.holes, "missing": r.missing}
        for r in cmp.refused
    ]
    out["unreliable"] = cmp.unreliable
    out["gate"] = cmp.gate
    out["judge_command"] = None if cmp.command is None else command_line(cmp.command)
    return {**out, **(extra or {})}


SUMMARY_HEADERS = (
    "level",
    "run",
    "measure",
    "n",
    "mean",
    "ci95_lo",
    "ci95_hi",
    "holes_0",
    "holes_top",
)


def summary_rows(ev: EvaluationFigures) -> list[tuple[Any, ...]]:
    """One row per run and measure: n averaged, mean, interval, bounds (None where absent)."""
    rows = []
    for run in ev.runs:
        s = ev.summaries[run]
        for m in (str(x) for x in ev.measures):
            ci = s.ci95[m]
            bound = (s.bounds or {}).get(m)
            rows.append(
                (
                    ev.level,
                    run,
                    m,
                    ev.n(m),
                    s.mean[m],
                    None if ci is None else ci[0],
                    None if ci is None else ci[1],
                    None if bound is None else bound[0],
                    None if bound is None else bound[1],
                )
            )
    return rows


PER_QUERY_HEADERS = ("level", "run", "qid", "measure", "value")


def per_query_rows(ev: EvaluationFigures) -> list[tuple[Any, ...]]:
    """One row per run, query and measure (value None where the query is left out)."""
    rows = []
    for run in ev.runs:
        for qid, values in ev.per_query(run).items():
            rows += [(ev.level, run, qid, m, v) for m, v in values.items()]
    return rows


def query_differences(
    cmp: ComparisonFigures, candidate: str, measure: str
) -> list[tuple[str, float]]:
    """(qid, candidate - baseline) for each query the measure averages, the largest gain first
    (ties by qid): the one order of the per-query charts, so the dashboard's and the HTML
    report's read the same way."""
    ev = cmp.evaluation
    values, kept = ev.values[measure], ev.averaged[measure]
    base, cand = ev.run_index(cmp.baseline), ev.run_index(candidate)
    found = [
        (qid, float(values[cand, i] - values[base, i])) for i, qid in enumerate(ev.qids) if kept[i]
    ]
    return sorted(found, key=lambda qd: (-qd[1], qd[0]))


COMPARISON_HEADERS = (
    "level",
    "baseline",
    "candidate",
    "measure",
    "n",
    "delta",
    "ci95_lo",
    "ci95_hi",
    "p",
    "p_holm",
    "significant",
    "unreliable",
)


def comparison_rows(cmp: ComparisonFigures) -> list[tuple[Any, ...]]:
    """One row per comparison."""
    return [
        (
            cmp.evaluation.level,
            d.baseline,
            d.candidate,
            d.measure,
            d.n,
            d.delta,
            None if d.ci95 is None else d.ci95[0],
            None if d.ci95 is None else d.ci95[1],
            d.p,
            d.p_holm,
            d.significant,
            d.unreliable,
        )
        for d in cmp.deltas
    ]
