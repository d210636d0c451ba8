"""The compare verb: candidates against a baseline, paired over queries, behind the judged@k
gate, with the rules of `fail_on` and the groups of `by` (metrics/compare.py, verdicts.py)."""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.api.results import Comparison
from judgepool.api.store import Store
from judgepool.metrics.regression import Rule
from judgepool.metrics.spec import CompareSpec
from judgepool.metrics.verdicts import run_compare

__all__ = ["CompareSpec", "Comparison", "compare"]


def compare(
    store: Store,
    baseline: str,
    candidates: Sequence[str],
    spec: CompareSpec | None = None,
    *,
    fail_on: str | Rule | Sequence[str | Rule] | None = None,
    by: str | None = None,
    refuse: bool = True,
) -> Comparison:
    """Paired differences of `candidates` from `baseline` as `spec` says.

    A comparison the gate refuses raises `GateRefusedError` (holding it in `.comparison`) unless
    `refuse=False`, which returns it (its `exit_code` and `raise_for_rules()` say the refusal):
    the CLI prints a refused comparison's JSON before it exits."""
    report = run_compare(store, baseline, candidates, spec, fail_on=fail_on, by=by)
    found = Comparison(report.comparison, report)
    error = report.comparison.error()
    if refuse and error is not None:
        error.comparison = found
        raise error
    return found
