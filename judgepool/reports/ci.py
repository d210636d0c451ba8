"""The report keys of the CI features, as plain data: verdicts, `--fail-on`, `--by group`.

`reports.data` builds the JSON object and validates it with judgepool/reports/model.py; this
module gives the extra keys (`verdicts`, `fail_on`, `groups`) and the CSV rows of `--by group`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgepool.metrics.groups import Groups
    from judgepool.metrics.regression import RuleCheck
    from judgepool.metrics.verdicts import CompareReport


def _pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [pair[0], pair[1]]


def fail_on_json(check: RuleCheck) -> dict[str, Any]:
    """The `fail_on` key: rules, watched measures, failed rules, breaches, exit code."""
    return {
        "rules": [str(r) for r in check.rules],
        "watched": {rule: list(names) for rule, names in check.watched.items()},
        "failed_rules": list(check.failed_rules),
        "breaches": [
            {
                "rule": b.rule,
                "candidate": b.candidate,
                "measure": b.measure,
                "delta": b.delta,
                "ci95": _pair(b.ci95),
                "p_holm": b.p_holm,
            }
            for b in check.breaches
        ],
        "unreliable": check.unreliable,
        "exit_code": check.exit_code,
    }


def groups_json(groups: Groups) -> dict[str, Any]:
    """The `groups` key of `--by group`."""
    return {
        "by": "group",
        "queries": dict(groups.queries),
        "ungrouped": groups.ungrouped,
        "means": [
            {
                "group": m.group,
                "run": m.run,
                "measure": m.measure,
                "n": m.n,
                "mean": m.mean,
                "ci95": _pair(m.ci95),
                "too_small": m.too_small,
            }
            for m in groups.means
        ],
        "comparisons": [
            {
                "group": d.group,
                "baseline": d.baseline,
                "candidate": d.candidate,
                "measure": d.measure,
                "n": d.n,
                "delta": d.delta,
                "ci95": _pair(d.ci95),
                "p": d.p,
                "p_holm": d.p_holm,
                "significant": d.significant,
                "too_small": d.too_small,
                "unreliable": d.unreliable,
            }
            for d in groups.deltas
        ],
        "tests": groups.tests,
    }


def report_json_extra(report: CompareReport) -> dict[str, Any]:
    """The keys a compare report adds to the comparison's JSON object."""
    return {
        "verdicts": {v.candidate: v.word for v in report.verdicts},
        "fail_on": None if report.rules is None else fail_on_json(report.rules),
        "groups": None if report.groups is None else groups_json(report.groups),
    }


GROUP_MEAN_HEADERS = (
    "level",
    "group",
    "run",
    "measure",
    "n",
    "mean",
    "ci95_lo",
    "ci95_hi",
    "too_small",
)
GROUP_DELTA_HEADERS = (
    "level",
    "group",
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
    "too_small",
    "unreliable",
)


def group_mean_rows(level: str, groups: Groups) -> list[tuple[Any, ...]]:
    """One CSV row per group, run and measure."""
    return [
        (level, m.group, m.run, m.measure, m.n, m.mean, *(m.ci95 or (None, None)), m.too_small)
        for m in groups.means
    ]


def group_delta_rows(level: str, groups: Groups) -> list[tuple[Any, ...]]:
    """One CSV row per group, candidate and measure."""
    return [
        (
            level,
            d.group,
            d.baseline,
            d.candidate,
            d.measure,
            d.n,
            d.delta,
            *(d.ci95 or (None, None)),
            d.p,
            d.p_holm,
            d.significant,
            d.too_small,
            d.unreliable,
        )
        for d in groups.deltas
    ]
