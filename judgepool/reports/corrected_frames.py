"""The judge-corrected figures as rows and polars schemas, for the library's results
(judgepool/api/results.py: `EvaluationFigures.corrected`, `ComparisonFigures.corrected`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures
    from judgepool.metrics.evaluate import EvaluationFigures

Rows = list[dict[str, Any]]


def _schema(names: dict[str, str]) -> dict[str, Any]:
    import polars as pl

    kinds = {"str": pl.String, "float": pl.Float64, "int": pl.Int64, "bool": pl.Boolean}
    return {name: kinds[kind] for name, kind in names.items()}


def mean_rows(ev: EvaluationFigures) -> tuple[Rows, dict[str, Any]]:
    """One row per run and measure with a corrected mean (or the reason it has none)."""
    schema = _schema(
        {
            "run": "str",
            "measure": "str",
            "estimate": "float",
            "ci_low": "float",
            "ci_high": "float",
            "audited": "int",
            "of": "int",
            "lambda": "float",
            "reason": "str",
        }
    )
    trust = ev.corrected
    if trust is None:
        return [], schema
    rows = []
    for (run, measure), c in trust.means.items():
        e = c.estimate
        rows.append(
            {
                "run": run,
                "measure": measure,
                "estimate": e.estimate,
                "ci_low": None if e.ci is None else e.ci[0],
                "ci_high": None if e.ci is None else e.ci[1],
                "audited": e.audited,
                "of": e.of,
                "lambda": e.lam,
                "reason": e.reason,
            }
        )
    return rows, schema


def delta_rows(cmp: ComparisonFigures) -> tuple[Rows, dict[str, Any]]:
    """One row per difference: the plain interval, the corrected one and the verdict."""
    schema = _schema(
        {
            "candidate": "str",
            "measure": "str",
            "delta": "float",
            "ci_low": "float",
            "ci_high": "float",
            "estimate": "float",
            "ppi_low": "float",
            "ppi_high": "float",
            "audited": "int",
            "of": "int",
            "lambda": "float",
            "verdict": "str",
            "shift": "float",
            "clipped": "bool",
            "reason": "str",
        }
    )
    trust = cmp.corrected
    if trust is None:
        return [], schema
    rows = []
    for d in cmp.deltas:
        c = trust.deltas.get((d.candidate, d.measure))
        if c is None:
            continue
        e = c.estimate
        rows.append(
            {
                "candidate": d.candidate,
                "measure": d.measure,
                "delta": d.delta,
                "ci_low": None if d.ci95 is None else d.ci95[0],
                "ci_high": None if d.ci95 is None else d.ci95[1],
                "estimate": e.estimate,
                "ppi_low": None if e.ci is None else e.ci[0],
                "ppi_high": None if e.ci is None else e.ci[1],
                "audited": e.audited,
                "of": e.of,
                "lambda": e.lam,
                "verdict": None if c.verdict is None else c.verdict.word,
                "shift": None if c.verdict is None else c.verdict.shift,
                "clipped": c.ratio is not None and c.ratio.clipped,
                "reason": e.reason or (trust.reason if e.ci is None else None),
            }
        )
    return rows, schema
