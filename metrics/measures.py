"""The measures as values: what each one means, and its name, which prints and parses as itself.

A `Measure` is a definition only (kind, cutoff k, relevance threshold); `metrics.compute` turns
definitions into numbers. Names follow ir-measures, so `str(m)` is what ir-measures prints and
`parse_measure(str(m)) == m`:

- ``nDCG@k``       gain = grade (grades <= 0 add nothing), discount log2(rank + 1), ideal from every
                   labelled doc of the query. trec_eval ``ndcg_cut.k``.
- ``R(rel=t)@k``   share of the query's docs with grade >= t found in the top k. trec_eval
                   ``recall.k`` at relevance level t. ``R@k`` when t = 1, as in ir-measures.
- ``nR@k``         docs with grade >= t in the top k / min(k, docs with grade >= t); t = 2 unless
                   written ``nR(rel=t)@k``. trec_eval ``relative_P.k`` with ``-l t``.
- ``Judged@k``     share of the top min(k, returned) docs that have an effective label (any grade,
                   negative ones included). ir-measures ``Judged@k``.

A query with no doc at a measure's threshold (grade >= 1 for nDCG) has no value for it: it is left
out of that measure's mean, unless the evaluation averages as trec_eval -c does, where it counts 0
(`metrics.evaluate`, `average="trec_eval"`). Judged@k has no threshold and is defined on every
query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from judgepool.pooling.errors import UsageError

Kind = Literal["nDCG", "R", "nR", "Judged"]
KINDS: tuple[Kind, ...] = ("nDCG", "R", "nR", "Judged")
# The threshold a kind uses when its name carries none (ir-measures' R defaults to rel=1).
DEFAULT_REL: dict[str, int] = {"R": 1, "nR": 2}
_NAME = re.compile(r"^(?P<kind>nDCG|R|nR|Judged)(?:\(rel=(?P<rel>-?\d+)\))?@(?P<k>\d+)$")


@dataclass(frozen=True)
class Measure:
    """One measure at cutoff `k`; `rel` is the lowest grade counted relevant (R and nR only)."""

    kind: Kind
    k: int
    rel: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(
                f"unknown measure kind {self.kind!r}", f"use one of {', '.join(KINDS)}"
            )
        check_k(self.k)
        if self.kind in DEFAULT_REL:
            if self.rel is None:
                object.__setattr__(self, "rel", DEFAULT_REL[self.kind])
            check_rel(int(self.rel or 0))
        elif self.rel is not None:
            raise UsageError(
                f"{self.kind} takes no relevance threshold (rel={self.rel})",
                f"write it without one, e.g. {self.kind}@{self.k}",
            )

    @property
    def threshold(self) -> int | None:
        """The lowest grade that makes a query count for this measure (None: every query)."""
        if self.kind == "nDCG":
            return 1
        return self.rel

    def __str__(self) -> str:
        shown_rel = self.rel is not None and self.rel != DEFAULT_REL.get(self.kind)
        params = f"(rel={self.rel})" if shown_rel else ""
        return f"{self.kind}{params}@{self.k}"

    def __repr__(self) -> str:
        return str(self)


def check_k(k: int) -> int:
    """Cutoffs are positive."""
    if k < 1:
        raise UsageError(f"cutoff k={k} is not positive", "use e.g. --k 10")
    return k


def check_rel(rel: int) -> int:
    """A relevance threshold below 1 would count non-relevant (grade 0) docs as relevant."""
    if rel < 1:
        raise UsageError(f"relevance threshold {rel} is below 1", "use a grade of 1 or more")
    return rel


def parse_measure(text: str) -> Measure:
    """``"nDCG@10"``, ``"R(rel=3)@10"``, ``"nR@10"``, ``"Judged@10"`` -> the Measure."""
    found = _NAME.match(text.strip())
    if found is None:
        raise UsageError(
            f"cannot read measure {text!r}",
            "write e.g. nDCG@10, R(rel=3)@10, nR@10, nR(rel=1)@10 or Judged@10",
        )
    rel = found["rel"]
    kind: Kind = found["kind"]  # type: ignore[assignment]
    return Measure(kind, int(found["k"]), int(rel) if rel is not None else None)


def default_measures(k: int = 10, rel: int = 2, key_rel: int = 3) -> tuple[Measure, ...]:
    """The four measures every report shows: nDCG, key-doc recall, nR, Judged, at cutoff k."""
    return (
        Measure("nDCG", k),
        Measure("R", k, key_rel),
        Measure("nR", k, rel),
        Measure("Judged", k),
    )
