"""A comparison as a report: the verdict per candidate, the rules, groups, label sources and the
call that reproduces it; what the markdown and HTML reports (and the JSON) are made from.

The **verdict** of a candidate reads the comparison's Holm-adjusted tests (the table's): `better`
when it is significantly better on some effectiveness measure and worse on none, `worse` when
significantly worse on some and better on none, `mixed` when both, `no significant difference`
when neither; every candidate is `refused` when the gate refused the comparison. A forced
comparison's verdicts are marked unreliable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from judgepool.defaults import AVERAGE, GATE, KEY_REL, REL, RESAMPLES, SEED, K
from judgepool.errors import Call, JudgepoolError
from judgepool.metrics.compare import ComparisonFigures, Delta, compare
from judgepool.metrics.groups import Groups, check_by, group_comparison
from judgepool.metrics.measures import default_measures
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

    def call(self, verb: str = "compare") -> Call:
        """The call (`compare`, or the CLI's `report`) that computes this comparison again, as
        data: the reports print it as the `judgepool ...` line (reports/command_line.py)."""
        cmp, ev = self.comparison, self.comparison.evaluation
        ms = list(ev.measures)
        listed: tuple[str, ...] | None = tuple(str(m) for m in ms)
        rel = key_rel = None
        if [m.kind for m in ms] == ["nDCG", "R", "nR", "Judged"]:
            kr, r = ms[1].rel or KEY_REL, ms[2].rel or REL
            if tuple(ms) == default_measures(ev.k, r, kr):  # the default four: --rel / --key-rel
                listed = None
                rel = None if r == REL else r
                key_rel = None if kr == KEY_REL else kr
        call = Call.of(
            verb,
            cmp.baseline,
            cmp.candidates,
            level=ev.level,
            labeller=ev.labeller,
            k=None if ev.k == K else ev.k,
            rel=rel,
            key_rel=key_rel,
            measures=listed,
            average=None if ev.average == AVERAGE else ev.average,
            resamples=None if ev.resamples == RESAMPLES else ev.resamples,
            seed=None if ev.seed == SEED else ev.seed,
            gate=None if cmp.gate == GATE else cmp.gate,
            force=cmp.force,
            by=None if self.groups is None else "group",
            fail_on=tuple(str(r) for r in self.rules.rules) if self.rules is not None else None,
        )
        return call.on(self.db)


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
