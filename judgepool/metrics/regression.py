"""`compare --fail-on`: rules that turn a comparison into a CI verdict (exit codes 0, 3, 4).

A rule watches some measures (default: every effectiveness measure compared, i.e. all but
Judged@k) and reads the comparison's own test, the one its table shows: a difference counts
when it is significant after Holm's correction over every candidate x measure comparison of the
call (`Delta.significant`, p(Holm) < alpha).

- `regression[=MEASURE,...]` fails when some candidate is significantly **worse** than the
  baseline (delta < 0) on a watched measure;
- `any-change[=MEASURE,...]` fails on a significant difference in either direction.

The exit code of a checked comparison (`RuleCheck.exit_code`):
- 3 when the gate refused it (a compared run's judged@k is under the gate), and also when it was
  forced past the gate (`--force`): the rules are evaluated on the forced figures and reported,
  marked unreliable, but a CI gate neither passes nor fails a change on figures that count
  unjudged docs as non-relevant; fill the holes first;
- 4 when a rule failed;
- 0 otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgepool.errors import (
    Call,
    GateRefusedError,
    JudgepoolError,
    Param,
    RuleFailedError,
    UsageError,
    remedy,
)
from judgepool.metrics.gate import describe
from judgepool.metrics.measures import Measure, parse_measure

if TYPE_CHECKING:
    from judgepool.metrics.compare import ComparisonFigures

_FAIL_ON = Param("fail_on", None)  # the parameter itself, in a sentence

KINDS: tuple[str, ...] = ("regression", "any-change")
Interval = tuple[float, float]


@dataclass(frozen=True)
class Rule:
    """One `--fail-on` rule: `kind` regression or any-change, on `measures` (None: every
    effectiveness measure of the comparison)."""

    kind: str
    measures: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return self.kind if self.measures is None else f"{self.kind}={','.join(self.measures)}"


def _split_measures(text: str) -> list[str]:
    """`nDCG@10,R(rel=3)@10` -> the measures; commas inside parentheses belong to a measure."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_rule(text: str) -> Rule:
    """`regression`, `regression=nDCG@10,nR@10`, `any-change` or `any-change=MEASURE,...`."""
    kind, has_list, listed = text.strip().partition("=")
    kind = kind.strip()
    if kind not in KINDS:
        raise UsageError(
            remedy("unknown {} rule ", _FAIL_ON) + repr(text),
            remedy(
                "use {}, {} or {}",
                Param("fail_on", "regression"),
                Param("fail_on", "regression=MEASURE,..."),
                Param("fail_on", "any-change"),
            ),
            value=text,
        )
    if not has_list:
        return Rule(kind)
    names = _split_measures(listed)
    if not all(names):
        raise UsageError(
            remedy("{} has an empty measure", Param("fail_on", text)),
            remedy(
                "list measures separated by commas, e.g. {}",
                Param("fail_on", f"{kind}=nDCG@10,nR@10"),
            ),
            value=text,
        )
    return Rule(kind, tuple(dict.fromkeys(str(parse_measure(n)) for n in names)))


def parse_rules(rules: str | Rule | Sequence[str | Rule] | None) -> tuple[Rule, ...]:
    """Rules given as text (`"regression=nDCG@10"`) or Rules; None or empty: no rule."""
    if rules is None:
        return ()
    if isinstance(rules, str | Rule):
        rules = [rules]
    return tuple(dict.fromkeys(r if isinstance(r, Rule) else parse_rule(r) for r in rules))


def watched(rule: Rule, measures: Sequence[Measure]) -> tuple[str, ...]:
    """The measures `rule` watches among the compared `measures`; one it names that is not
    compared (or is Judged@k, which is the gate's input, not tested) is refused."""
    tested = [str(m) for m in measures if m.kind != "Judged"]
    if rule.measures is None:
        return tuple(tested)
    for name in rule.measures:
        if name not in tested:
            if name.startswith("Judged@"):
                why = "Judged@k is the gate's input, not a tested difference"
            else:
                why = f"it is not among the compared measures ({', '.join(tested)})"
            raise UsageError(
                remedy("{}: cannot watch ", Param("fail_on", str(rule))) + f"{name}: {why}",
                remedy(
                    "add {} (the rule reads the test the table shows), or drop it from the rule",
                    Param("measures", (name,)),
                ),
                value=name,
            )
    return rule.measures


@dataclass(frozen=True)
class Breach:
    """A comparison that breaks a rule: significant, and worse (regression) or any change."""

    rule: str
    candidate: str
    measure: str
    delta: float
    ci95: Interval | None
    p_holm: float


@dataclass(frozen=True)
class RuleCheck:
    """The rules of a comparison and what they found."""

    rules: tuple[Rule, ...]
    watched: dict[str, tuple[str, ...]]  # rule -> the measures it watches
    breaches: tuple[Breach, ...]
    refused: bool  # the gate refused and nothing was forced: no difference to read
    unreliable: bool  # forced past the gate: breaches are of unreliable figures

    @property
    def failed_rules(self) -> tuple[str, ...]:
        """The rules with at least one breach, in the order given."""
        broken = {b.rule for b in self.breaches}
        return tuple(str(r) for r in self.rules if str(r) in broken)

    @property
    def exit_code(self) -> int:
        """3: refused or forced past the gate; 4: a rule failed; 0: every rule held."""
        if self.refused or self.unreliable:
            return 3
        return 4 if self.breaches else 0


def check_rules(cmp: ComparisonFigures, rules: Sequence[Rule]) -> RuleCheck:
    """Read the comparison's Holm-adjusted verdicts against `rules`."""
    measures = cmp.evaluation.measures
    seen = {str(r): watched(r, measures) for r in rules}
    breaches = []
    for rule in rules:
        names = set(seen[str(rule)])
        for d in cmp.deltas:
            if d.measure not in names or not d.significant or d.delta is None or d.p_holm is None:
                continue
            if rule.kind == "regression" and d.delta >= 0:
                continue
            breaches.append(Breach(str(rule), d.candidate, d.measure, d.delta, d.ci95, d.p_holm))
    refused = bool(cmp.refused) and not cmp.force
    return RuleCheck(tuple(rules), seen, tuple(breaches), refused, cmp.unreliable)


def describe_breach(b: Breach, baseline: str) -> str:
    """`cand is worse than base on nDCG@10 (-0.052 [-0.090, -0.013], p(Holm) 0.0120)`."""
    word = "worse" if b.delta < 0 else "better"
    ci = "" if b.ci95 is None else f" [{b.ci95[0]:+.3f}, {b.ci95[1]:+.3f}]"
    return (
        f"{b.candidate} is significantly {word} than {baseline} on {b.measure} "
        f"({b.delta:+.3f}{ci}, p(Holm) {b.p_holm:.4f})"
    )


def rules_error(cmp: ComparisonFigures, check: RuleCheck) -> JudgepoolError | None:
    """The error the CLI exits with (3 or 4), None when every rule held."""
    if check.refused:
        return cmp.error()
    ev = cmp.evaluation
    if check.unreliable:
        listing = "; ".join(describe(r, ev.k, cmp.gate) for r in cmp.refused)
        seen = (
            f"; on these figures {', '.join(check.failed_rules)} would fail"
            if check.breaches
            else "; on these figures every rule would hold"
        )
        fill = remedy("fill the holes with: {}, then", cmp.command) if cmp.command else "then"
        return GateRefusedError(
            remedy("{} cannot decide on a comparison forced past the judged@", _FAIL_ON)
            + f"{ev.k} gate of {cmp.gate:g} ({listing}): its figures are UNRELIABLE{seen}",
            fill + remedy(" compare again without {}", Param("force")),
        )
    if not check.breaches:
        return None
    said = "; ".join(describe_breach(b, cmp.baseline) for b in check.breaches)
    lost = Call.of("report", cmp.baseline, cmp.candidates, html="report.html")
    return RuleFailedError(
        remedy("{} failed: ", Param("fail_on", tuple(check.failed_rules))) + said,
        remedy(
            "see which queries it lost (`{}`), fix the change, or leave the measure out of {} "
            "if it may change",
            lost,
            _FAIL_ON,
        ),
    )
