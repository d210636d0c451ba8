"""The evaluate verb: measures of runs with 95% bootstrap intervals (metrics/evaluate.py), and,
with `by="group"`, each query group's figures (metrics/groups.py)."""

from __future__ import annotations

from collections.abc import Sequence

from judgepool.api.results import Evaluation
from judgepool.api.store import Store
from judgepool.metrics import evaluate as metrics
from judgepool.metrics.groups import check_by, group_means
from judgepool.metrics.spec import EvalSpec

__all__ = ["EvalSpec", "Evaluation", "evaluate"]


def evaluate(
    store: Store,
    runs: Sequence[str] | None = None,
    spec: EvalSpec | None = None,
    *,
    by: str | None = None,
) -> Evaluation:
    """`spec`'s measures of `runs` (default: all) over the evaluation set; `by="group"` adds
    each query group's means (refused before anything is computed when no query has a group)."""
    # One read connection held for the whole verb: its reads (runs, labels, judge labels,
    # canaries, groups) share it instead of opening the file once each (~30 ms an open).
    with store.read():
        members = check_by(by, store)
        result = metrics.evaluate(store, list(runs) if runs else None, spec)
        return Evaluation(result, group_means(result, members) if by is not None else None)
