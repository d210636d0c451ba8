"""The judge-corrected figures (metrics/corrected.py) as the JSON report's fields and as rows
for the table: what `eval` and `compare` add whenever a judge's labels are effective."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgepool.reports.command_line import command_line

if TYPE_CHECKING:
    from judgepool.metrics.compare import Delta
    from judgepool.metrics.corrected import Corrected, Trust

NO_JUDGE = "no judge label is among the effective labels: there is nothing to correct"


def _ppi(found: Corrected | None) -> dict[str, Any] | None:
    if found is None:
        return None
    out = found.estimate.to_json()
    ratio = found.ratio
    if out is None:
        return None
    if ratio is None:  # the report's defaults (reports.model.PPIReport)
        return out | {"judge": None, "audit_ci95": None, "df": None, "clipped": False}
    return out | {
        "judge": ratio.judge,
        "audit_ci95": None if ratio.audit_ci is None else list(ratio.audit_ci),
        "df": ratio.df,
        "clipped": ratio.clipped,
    }


def _verdict(found: Corrected | None) -> dict[str, Any] | None:
    if found is None or found.verdict is None:
        return None
    v = found.verdict
    return {
        "word": v.word,
        "shift": v.shift,
        "shift_ci95": None if v.shift_ci is None else list(v.shift_ci),
        "sentence": v.sentence(),
        "needed": v.needed,
    }


def _forecast(found: Corrected | None) -> dict[str, Any] | None:
    if found is None or found.forecast is None:
        return None
    f = found.forecast
    return {"queries": f.queries, "width": f.width, "basis": f.basis, "reason": f.reason}


def delta_fields(trust: Trust | None, d: Delta) -> dict[str, Any]:
    """ppi, ppi_reason, ppi_forecast and verdict of one comparison."""
    if trust is None:
        return {
            "ppi": None,
            "ppi_reason": NO_JUDGE,
            "ppi_forecast": None,
            "verdict": None,
            "verdict_detail": None,
        }
    found = trust.deltas.get((d.candidate, d.measure))
    reason = None
    if found is None:
        reason = "not corrected: the measure has no per-query value in the judge's view"
    elif found.estimate.ci is None:
        reason = found.estimate.reason
        if trust.sample is None or trust.unusable is not None:
            reason = trust.reason
    return {
        "ppi": _ppi(found),
        "ppi_reason": reason,
        "ppi_forecast": _forecast(found),
        "verdict": None if found is None or found.verdict is None else found.verdict.word,
        "verdict_detail": _verdict(found),
    }


def run_fields(trust: Trust | None, run: str, measures: list[str]) -> dict[str, Any] | None:
    """measure -> the run's corrected mean (None: none), or None without judge labels."""
    if trust is None:
        return None
    return {m: _ppi(trust.means.get((run, m))) for m in measures if (run, m) in trust.means}


def audit_json(trust: Trust | None) -> dict[str, Any] | None:
    """The report's `audit` object."""
    if trust is None:
        return None
    s = trust.sample
    return {
        "judge_labels": trust.judge_labels,
        "sample": None
        if s is None
        else {
            "id": s.id,
            "seed": s.seed,
            "queries": len(s.qids),
            "evaluation_set": s.evaluation_set,
            "inclusion_probability": s.inclusion_probability,
            "design": s.design,
        },
        "audited": list(trust.audited),
        "queries": trust.queries,
        "method": trust.method,
        "reason": trust.reason,
        "command": None if trust.command is None else command_line(trust.command),
    }
