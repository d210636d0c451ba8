"""A comparison as a report: the verdict per candidate, the rules, groups, label sources and the
command that reproduces it; what the markdown and HTML reports (and the JSON) are made from.

The **verdict** of a candidate reads the comparison's Holm-adjusted tests (the table's): `better`
when it is significantly better on some effectiveness measure and worse on none, `worse` when
significantly worse on some and better on none, `mixed` when both, `no significant difference`
when neither; every candidate is `refused` when the gate refused the comparison. A forced
comparison's verdicts are marked unreliable.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from judgepool.defaults import AVERAGE, BY, GATE, KEY_REL, REL, RESAMPLES, SEED, K
from judgepool.errors import JudgepoolError, UsageError
from judgepool.metrics.compare import ComparisonFigures, Delta, compare
from judgepool.metrics.groups import Groups, group_comparison
from judgepool.metrics.measures import Measure, default_measures
from judgepool.metrics.regression import (
    Rule,
    RuleCheck,
    check_rules,
    parse_rules,
    rules_error,
    watched,
)
from judgepool.metrics.spec import CompareSpec
from judgepool.pooling.label_origins import LabelSource, top_k_sources
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.query_groups import group_members


@dataclass(frozen=True)
class Verdict:
    """One candidate's verdict and the significant differences behind it."""

    candidate: str
    word: str  # better | worse | mixed | no significant difference | refused
    better: tuple[Delta, ...]
    worse: tuple[Delta, ...]


@dataclass(frozen=True)
class CompareReport:
    """Everything a report of one comparison shows."""

    comparison: ComparisonFigures
    rules: RuleCheck | None
    groups: Groups | None
    sources: tuple[LabelSource, ...]
    db: str  # the database, as the command was given it

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """Each candidate's verdict (module docstring)."""
        cmp = self.comparison
        out = []
        for c in cmp.candidates:
            mine = [d for d in cmp.deltas if d.candidate == c and d.significant and d.delta]
            better = tuple(d for d in mine if (d.delta or 0) > 0)
            worse = tuple(d for d in mine if (d.delta or 0) < 0)
            if not cmp.deltas:
                word = "refused"
            elif better and worse:
                word = "mixed"
            else:
                word = "better" if better else "worse" if worse else "no significant difference"
            out.append(Verdict(c, word, better, worse))
        return tuple(out)

    @property
    def exit_code(self) -> int:
        """What `judgepool compare` exits with: the rules' code, else 3 when refused, else 0."""
        if self.rules is not None:
            return self.rules.exit_code
        return 3 if self.comparison.error() is not None else 0

    def error(self) -> JudgepoolError | None:
        """The error behind a non-zero exit code (the gate's refusal or a broken rule)."""
        if self.rules is not None:
            return rules_error(self.comparison, self.rules)
        return self.comparison.error()

    def command(self, tail: Sequence[str] = (), verb: str = "compare") -> str:
        """The `judgepool` command line (`compare` or `report`) that computes this comparison
        again, then `tail` (e.g. the output format)."""
        cmp, ev = self.comparison, self.comparison.evaluation
        parts = ["judgepool", "--db", self.db, verb, cmp.baseline, *cmp.candidates]
        parts += ["--level", ev.level]
        if ev.labeller is not None:
            parts += ["--judge", ev.labeller]
        parts += _measure_args(ev.measures, ev.k)
        if ev.average != AVERAGE:
            parts += ["--average", ev.average]
        if ev.resamples != RESAMPLES:
            parts += ["--resamples", str(ev.resamples)]
        if ev.seed != SEED:
            parts += ["--seed", str(ev.seed)]
        if cmp.gate != GATE:
            parts += ["--gate", f"{cmp.gate:g}"]
        if cmp.force:
            parts.append("--force")
        if self.groups is not None:
            parts += ["--by", "group"]
        for rule in self.rules.rules if self.rules is not None else ():
            parts += ["--fail-on", str(rule)]
        return shlex.join([*parts, *tail])


def _measure_args(measures: Sequence[Measure], k: int) -> list[str]:
    """The options that choose these measures: --k/--rel/--key-rel for the default four."""
    ms = list(measures)
    cut = [] if k == K else ["--k", str(k)]
    if [m.kind for m in ms] == ["nDCG", "R", "nR", "Judged"]:
        key_rel, rel = ms[1].rel or KEY_REL, ms[2].rel or REL
        if tuple(ms) == default_measures(k, rel, key_rel):
            return (
                cut
                + ([] if rel == REL else ["--rel", str(rel)])
                + ([] if key_rel == KEY_REL else ["--key-rel", str(key_rel)])
            )
    return cut + [arg for m in ms for arg in ("--measure", str(m))]


def check_by(by: str | None, store: Store) -> dict[str, tuple[str, ...]]:
    """The groups `by` asks for (none when by is None); refused when the database has none."""
    if by is None:
        return {}
    if by not in BY:
        raise UsageError(f"cannot break results down by {by!r}", "use --by group")
    members = group_members(store)
    if not members:
        raise UsageError(
            "--by group: no query has a group in this database",
            "ingest the groups: judgepool ingest queries topics.tsv --groups groups.tsv "
            "(or a group column in the queries file)",
        )
    return members


def compare_report(
    store: Store,
    cmp: ComparisonFigures,
    rules: Sequence[Rule] | None = None,
    by: str | None = None,
) -> CompareReport:
    """The report of `cmp`: its rules checked (when given), its groups (by="group") and the
    sources of the labels in the compared runs' top k."""
    ev = cmp.evaluation
    check = check_rules(cmp, rules) if rules else None
    members = check_by(by, store)
    groups = group_comparison(cmp, members) if by is not None else None
    sources = top_k_sources(store, ev.runs, ev.level, ev.labeller, ev.k)
    return CompareReport(cmp, check, groups, sources, str(store.path))


def run_compare(
    store: Store,
    baseline: str,
    candidates: Sequence[str],
    spec: CompareSpec | None = None,
    *,
    fail_on: str | Rule | Sequence[str | Rule] | None = None,
    by: str | None = None,
) -> CompareReport:
    """`metrics.compare.compare` as `spec` says, and its report: the rules and `by` are checked
    before anything is computed (a rule on a measure that is not compared is refused)."""
    spec = spec or CompareSpec()
    rules = parse_rules(fail_on)
    chosen = spec.chosen()
    for rule in rules:
        watched(rule, chosen)
    check_by(by, store)
    cmp = compare(store, baseline, candidates, replace(spec, measures=chosen))
    return compare_report(store, cmp, rules, by)
