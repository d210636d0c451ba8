"""Several judges at once: a jury of models (`--model A --model B`), or one model asked K times
(`--num-samples K`), combined into one label per pair.

Every member labels every hole with its own cache entries and writes its own labels (ordinary
judge labels: `--judge MEMBER` counts them). The jury then writes one combined label per pair,
labeller `jury(A,B,C)@COMBINE` (`jury(A xK)@COMBINE` for K samples of A), with each member's
label (labeller, grade, id) in its provenance. By the effective-label rule
(pooling/store/judgments.py) a jury's label is the one that counts by default where it exists.

Combining (`median`, `majority`, `mean`) always breaks ties towards the lower grade, and says so
in the label's provenance (`tie`): the lower of the two middle grades for an even number of
members, the lowest of the most frequent grades, a mean exactly halfway rounded down. A pair
gets a combined grade only when every member graded it; when some member's final answer failed
(error, unparsed) the jury's label is an `error` naming it, and a pair some member has not
answered yet (a stop, a cap) gets none: the next run does it.

A sample is `SampledJudge`: the member judge with the sample index in its cache key (so every
sample is its own cache entry and its own request), labeller `MEMBER#i`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from judgepool.errors import JudgeError
from judgepool.judge.base import Estimate, Judge, JudgeAnswer, JudgeRequest
from judgepool.judge.cache import content_key
from judgepool.judge.provenance import now_iso
from judgepool.pooling.store.judgments import JURY_PREFIX, Judgment, write_judgments
from judgepool.pooling.store.labels_since import labels_since

if TYPE_CHECKING:
    from judgepool.judge.requests import Skipped
    from judgepool.pooling.store.connection import Store

COMBINES: tuple[str, ...] = ("median", "majority", "mean")
TIE_RULE = "broken towards the lower grade"


class SampledJudge:
    """Sample `index` (1-based) of `of` of a judge: its own cache key and labeller."""

    def __init__(self, inner: Judge, index: int, of: int) -> None:
        self.inner = inner
        self.index = index
        self.of = of

    @property
    def labeller(self) -> str:
        return f"{self.inner.labeller}#{self.index}"

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "sample": {"index": self.index, "of": self.of}}

    def cache_key(self, request: JudgeRequest) -> str:
        return content_key({"judge": self.inner.cache_key(request), "sample": self.index})

    def prepare(self, store: Store, requests: Sequence[JudgeRequest]) -> None:
        self.inner.prepare(store, requests)

    def estimate(self, requests: Sequence[JudgeRequest]) -> Estimate:
        return self.inner.estimate(requests)

    async def judge(self, request: JudgeRequest) -> JudgeAnswer:
        return await self.inner.judge(request)

    def readiness(self) -> JudgeError | None:
        check = getattr(self.inner, "readiness", None)
        return check() if check is not None else None

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def jury_labeller(labellers: Sequence[str], combine: str, samples: int = 1) -> str:
    """`jury(A,B)@median`; with K samples per model `jury(A xK,B xK)@median`."""
    if samples > 1:
        names = list(dict.fromkeys(name.rsplit("#", 1)[0] for name in labellers))
        inside = ",".join(f"{name} x{samples}" for name in names)
    else:
        inside = ",".join(labellers)
    return f"{JURY_PREFIX}{inside})@{combine}"


@dataclass(frozen=True)
class Combined:
    """A combined grade; `tie` when the rule had to break a tie (towards the lower grade);
    `value` is the exact mean for `mean` (e.g. '5/2')."""

    grade: int
    tie: bool
    value: str | None = None


def combine(grades: Sequence[int], how: str) -> Combined:
    """Combine members' grades by `how` (median, majority, mean), ties towards the lower."""
    if not grades:
        raise ValueError("nothing to combine")
    ordered = sorted(grades)
    n = len(ordered)
    if how == "median":
        low, high = ordered[(n - 1) // 2], ordered[n // 2]
        return Combined(low, low != high)
    if how == "majority":
        counts = Counter(ordered)
        top = max(counts.values())
        best = sorted(g for g, c in counts.items() if c == top)
        return Combined(best[0], len(best) > 1)
    if how == "mean":
        mean = Fraction(sum(ordered), n)
        floor = mean.numerator // mean.denominator
        half = mean - floor == Fraction(1, 2)
        grade = floor if mean - floor <= Fraction(1, 2) else floor + 1
        return Combined(grade, half, str(mean))
    raise ValueError(f"unknown combine {how!r}: use one of {COMBINES}")


@dataclass
class JuryResult:
    """What combining wrote: pairs combined (by grade), ties broken, failed and unanswered."""

    labeller: str
    combine: str
    ok: int = 0
    failed: int = 0
    unanswered: int = 0
    ties: int = 0
    grades: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    written: int = 0


def _label(
    request: JudgeRequest,
    labeller: str,
    how: str,
    members: list[dict[str, Any]],
    combined: Combined | None,
    note: str | None,
) -> Judgment:
    provenance: dict[str, Any] = {
        "judge": "jury",
        "combine": how,
        "members": members,
        "tie": (TIE_RULE if combined.tie else None) if combined is not None else None,
        "judged_at": now_iso(),
        "shown": [{"doc_id": s.doc_id, "start": s.start, "end": s.end} for s in request.shown],
        **({"mean": combined.value} if combined is not None and combined.value else {}),
        **({request.purpose: dict(request.about)} if request.about else {}),
    }
    grades = ", ".join(str(m["grade"]) for m in members)
    raw = f"{how} of {grades} = {combined.grade}" if combined is not None else None
    return Judgment(
        qid=request.qid,
        doc_id=request.doc_id,
        level=request.level,
        grade=None if combined is None else combined.grade,
        source="judge",
        labeller=labeller,
        status="ok" if combined is not None else "error",
        raw_output=raw,
        cost=0.0,
        provenance=provenance,
        note=note,
        purpose=request.purpose,
    )


def combine_run(
    store: Store,
    members: Sequence[str],
    labeller: str,
    how: str,
    requests: Sequence[JudgeRequest],
    since_id: int,
    skipped: Sequence[Skipped] = (),
) -> JuryResult:
    """Write the jury's label of every request its members all answered since `since_id`."""
    result = JuryResult(labeller, how)
    if not requests and not skipped:
        return result
    level = requests[0].level if requests else skipped[0].level
    purpose = requests[0].purpose if requests else "label"
    pairs = [(r.qid, r.doc_id) for r in requests]
    found = labels_since(store, level, members, since_id, purpose, pairs)
    labels: list[Judgment] = []
    for request in requests:
        pair = (request.qid, request.doc_id)
        got = [found[m].get(pair) for m in members]
        if any(g is None for g in got):
            result.unanswered += 1
            continue
        listed = [
            {"labeller": m, "grade": g.grade, "status": g.status, "judgment_id": g.id}
            for m, g in zip(members, got, strict=True)
            if g is not None
        ]
        bad = [x for x in listed if x["status"] != "ok"]
        if bad:
            why = "; ".join(f"{x['labeller']} {x['status']}" for x in bad)
            labels.append(_label(request, labeller, how, listed, None, f"no combined grade: {why}"))
            result.failed += 1
            for x in bad:
                result.failures[str(x["status"])] += 1
            continue
        combined = combine([g.grade for g in got if g is not None and g.grade is not None], how)
        labels.append(_label(request, labeller, how, listed, combined, None))
        result.ok += 1
        result.ties += combined.tie
        result.grades[combined.grade] += 1
    if skipped:
        marks = [
            Judgment(
                qid=s.qid,
                doc_id=s.doc_id,
                grade=None,
                source="judge",
                labeller=labeller,
                status="no_text",
                level=s.level,
                note=s.reason,
                provenance={"judge": "jury", "judged_at": now_iso()},
            )
            for s in skipped
        ]
        write_judgments(store, marks, unless_marked=True)
    # Holes: once per pair and status (two jury processes at once write one); canaries: every
    # run's own, so that each run's check reads its own answers.
    result.written = write_judgments(store, labels, unless_marked=purpose == "label")
    return result
