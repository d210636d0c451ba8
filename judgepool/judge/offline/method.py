"""The offline judge's grading rule (method `neighbour-v1`): pure numpy, no I/O, no model.

Inputs are L2-normalised embeddings, so a dot product is a cosine similarity. For a hole (q, d):

1. **Near-duplicate.** If some passage of q with a label has similarity >= 0.95 to d (the same
   text under a new id after a re-chunking, or a trivial edit of it), d takes that label's grade.
2. **Neighbour.** Else, if the nearest labelled passage of q has similarity >= 0.4 and the
   neighbour rule is on for this collection (see 4), d takes the nearest passage's grade. Ties
   between equally near passages take their mean grade, rounded half up.
3. **Query similarity.** Else (q has no labelled passage with text, or none is near enough),
   the grade is the number of thresholds t1 <= t2 <= t3 that cos(q, d) reaches.
4. **Calibration** (per batch of holes = per collection being judged), on the labelled pairs of
   the queries judged: the thresholds are those that maximise Cohen's kappa between the
   query-similarity grade and the labels (cut points searched among 41 quantiles of the
   similarities); with fewer than 30 labelled pairs, or a single grade among them, the
   documented defaults `DEFAULT_THRESHOLDS` (fitted the same way on TREC DL 2019-2021 BM25
   top-10 labels with all-MiniLM-L6-v2) are used. The neighbour rule is then scored
   leave-one-out (each labelled pair graded from the *other* labelled passages of its query);
   it stays on unless it agrees with the labels less than the query-similarity rule does.

Why the neighbour's grade is carried as is, not averaged or re-thresholded: on TREC DL 2019-2021
(bench/bench_offline_judge.py), a similarity-weighted grade average with kappa-calibrated
thresholds, and blends that mix query similarity into every hole, agreed less with the hidden
human labels and ordered the runs less faithfully; query similarity alone favours the dense
runs that resemble the judge's own embedding model. Query similarity earns its place where a
hole has no near labelled passage, which matters most when queries have few labels. The 0.4
cut-off is the middle of the plateau (0.35-0.45) where run-order fidelity held on all three
DL years; at 0.5 and above it degrades, below 0.35 agreement drops slightly.

Why rule 3 uses the raw cos(q, d) although its scale differs from query to query (the
informal "ticket" questions of the demo collection score low against every passage): a rule
on cos(q, d) minus the mean (or best, or grade-weighted mean) similarity of the query's
relevant labelled passages found 5-7 of the demo's 10-14 relevant doc-level holes where this
rule finds none (percentile or z-score among all its labelled passages: 1-2), but it was
slightly worse on TREC DL with depth-10 labels and clearly worse once labels are scarce
(BM25 depth-3 labels: tau 0.73 -> 0.47-0.60 on DL19, 0.87 -> 0.47 on DL20, where the mean
version also out-scored the neighbour rule and so switched it off). Shrinking the per-query
level towards the collection's lost the demo gain; choosing the amount of normalisation by
leave-one-out kappa picked values that did not carry over to the holes. On the demo the
judge embeds with the very model that produced the dense runs, so query similarity cannot tell
apart the documents those runs rank highly. Max-over-chunks document similarity at the doc
level was no clear gain either (figures: bench/bench_offline_judge.py --demo, this method).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgepool.stats.agreement import cohen_kappa

METHOD_VERSION = "neighbour-v1"
#: A labelled passage this similar to a hole is the same passage for grading purposes.
NEAR_DUPLICATE = 0.95
#: Below this similarity the nearest labelled passage is not evidence about the hole.
NEIGHBOUR_MIN = 0.4
#: Query-similarity thresholds (grade 1, 2, 3) when a collection has too few labels to fit them.
DEFAULT_THRESHOLDS: tuple[float, float, float] = (0.63, 0.66, 0.78)
#: Labelled pairs needed before thresholds are fitted rather than taken from the defaults.
MIN_CALIBRATION_PAIRS = 30
#: Candidate cut points for the threshold search: this many quantiles of the similarities.
QUANTILES = 41

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class QueryEvidence:
    """One query's embedding and its labelled passages (ids, grades, embeddings, row-aligned)."""

    query: Vectors
    doc_ids: tuple[str, ...]
    grades: npt.NDArray[np.int64]
    passages: Vectors

    def __post_init__(self) -> None:
        if not (len(self.doc_ids) == len(self.grades) == len(self.passages)):
            raise ValueError("doc_ids, grades and passages must be aligned")


@dataclass(frozen=True)
class Calibration:
    """What the labels that exist say about this collection, and the settings fitted from them."""

    thresholds: tuple[float, float, float]
    fitted: bool
    pairs: int
    kappa_query_rule: float | None
    kappa_neighbour_rule: float | None
    neighbours_on: bool

    def as_dict(self) -> dict[str, Any]:
        """Rounded, JSON-ready: stored in every label's provenance."""
        return {
            "thresholds": [round(t, 6) for t in self.thresholds],
            "thresholds_from": "labels" if self.fitted else "defaults",
            "pairs": self.pairs,
            "kappa_query_rule": _round(self.kappa_query_rule),
            "kappa_neighbour_rule_loo": _round(self.kappa_neighbour_rule),
            "neighbour_rule": "on" if self.neighbours_on else "off",
        }


@dataclass(frozen=True)
class Decision:
    """The grade of one hole and the evidence it came from."""

    rule: str
    grade: int
    s_query: float
    s_neighbour: float | None
    neighbour: int | None

    def evidence(
        self, ev: QueryEvidence | None, calibration: Calibration, excluded: str | None = None
    ) -> dict[str, Any]:
        """The compact evidence written as the label's raw output."""
        out: dict[str, Any] = {
            "method": METHOD_VERSION,
            "rule": self.rule,
            "grade": self.grade,
            "s_query": round(self.s_query, 4),
            "labelled": 0 if ev is None else len(ev.doc_ids) - (excluded is not None),
            "thresholds": [round(t, 4) for t in calibration.thresholds],
        }
        if ev is not None and self.neighbour is not None and self.s_neighbour is not None:
            out["neighbour"] = {
                "doc_id": ev.doc_ids[self.neighbour],
                "grade": int(ev.grades[self.neighbour]),
                "similarity": round(self.s_neighbour, 4),
            }
        return out


def _round(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 4)


def query_grade(similarity: float, thresholds: tuple[float, float, float]) -> int:
    """How many thresholds the query similarity reaches (0-3)."""
    return sum(1 for t in thresholds if similarity >= t)


def nearest(
    similarities: npt.NDArray[np.floating[Any]], grades: npt.NDArray[np.int64]
) -> tuple[int, float, int]:
    """(index, similarity, grade) of the nearest labelled passage; exact ties share their grade."""
    best = float(similarities.max())
    tied = np.flatnonzero(similarities >= best - 1e-6)
    grade = math.floor(float(grades[tied].mean()) + 0.5)
    return int(tied[0]), best, grade


def decide(
    s_query: float,
    similarities: npt.NDArray[np.floating[Any]],
    grades: npt.NDArray[np.int64],
    calibration: Calibration,
) -> Decision:
    """Apply rules 1-3 of the module docstring to one hole."""
    if len(similarities):
        index, s_n, grade = nearest(similarities, grades)
        if s_n >= NEAR_DUPLICATE:
            return Decision("near_duplicate", grade, s_query, s_n, index)
        if calibration.neighbours_on and s_n >= NEIGHBOUR_MIN:
            return Decision("neighbour", grade, s_query, s_n, index)
        return Decision(
            "query_similarity", query_grade(s_query, calibration.thresholds), s_query, s_n, index
        )
    return Decision(
        "query_similarity", query_grade(s_query, calibration.thresholds), s_query, None, None
    )


def fit_thresholds(
    similarities: npt.NDArray[np.floating[Any]], grades: npt.NDArray[np.int64]
) -> tuple[tuple[float, float, float], float]:
    """The thresholds t1 <= t2 <= t3 maximising kappa of `query_grade` against `grades`.

    Cut points are searched among `QUANTILES` quantiles of the similarities (plus +inf, so a
    grade may go unused); every ordered triple is scored at once from cumulative counts.
    Returns the thresholds and their kappa; the first best triple wins a tie.
    """
    s = np.asarray(similarities, dtype=np.float64)
    y = np.asarray(grades, dtype=np.int64)
    cuts = np.unique(np.quantile(s, np.linspace(0.0, 1.0, QUANTILES)))
    cuts = np.append(cuts, np.inf)
    # at_least[g, j] = number of pairs of grade g whose similarity reaches cut j
    at_least = np.stack([(s[y == g][:, None] >= cuts[None, :]).sum(axis=0) for g in range(4)])
    per_grade = np.array([(y == g).sum() for g in range(4)])
    triples = np.array(list(itertools.combinations_with_replacement(range(len(cuts)), 3)))
    a, b, c = at_least[:, triples[:, 0]], at_least[:, triples[:, 1]], at_least[:, triples[:, 2]]
    # counts[k, g, p]: pairs of true grade g predicted p under triple k
    counts = np.stack([per_grade[:, None] - a, a - b, b - c, c], axis=2).transpose(1, 0, 2)
    total = float(len(y))
    observed = np.trace(counts, axis1=1, axis2=2) / total
    expected = (counts.sum(axis=2) * counts.sum(axis=1)).sum(axis=1) / (total * total)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = np.where(expected < 1.0, (observed - expected) / (1.0 - expected), -np.inf)
    best = int(np.argmax(kappas))
    chosen = tuple(float(cuts[i]) for i in triples[best])
    return (chosen[0], chosen[1], chosen[2]), float(kappas[best])


def _loo_neighbour_grades(
    evidence: list[QueryEvidence], calibration: Calibration
) -> tuple[list[int], list[int]]:
    """Each labelled pair graded by rules 1-3 from the other labelled passages of its query."""
    truth: list[int] = []
    predicted: list[int] = []
    for ev in evidence:
        if len(ev.doc_ids) == 0:
            continue
        sims = ev.passages @ ev.passages.T
        s_query = ev.passages @ ev.query
        others = ~np.eye(len(ev.doc_ids), dtype=bool)
        for i in range(len(ev.doc_ids)):
            decision = decide(
                float(s_query[i]), sims[i][others[i]], ev.grades[others[i]], calibration
            )
            truth.append(int(ev.grades[i]))
            predicted.append(decision.grade)
    return truth, predicted


def calibrate(evidence: list[QueryEvidence]) -> Calibration:
    """Fit the thresholds and decide on the neighbour rule from the labels that exist."""
    s_query = [ev.passages @ ev.query for ev in evidence if len(ev.doc_ids)]
    grades = [ev.grades for ev in evidence if len(ev.doc_ids)]
    if not s_query:
        return Calibration(DEFAULT_THRESHOLDS, False, 0, None, None, True)
    sims = np.concatenate(s_query)
    y = np.concatenate(grades)
    pairs = len(y)
    if pairs < MIN_CALIBRATION_PAIRS or len(np.unique(y)) < 2:
        return Calibration(DEFAULT_THRESHOLDS, False, pairs, None, None, True)
    thresholds, kappa_query = fit_thresholds(sims, y)
    trial = Calibration(thresholds, True, pairs, kappa_query, None, True)
    truth, predicted = _loo_neighbour_grades(evidence, trial)
    kappa_rule = cohen_kappa(truth, predicted)
    rule_on = math.isnan(kappa_rule) or kappa_rule >= kappa_query
    return Calibration(thresholds, True, pairs, kappa_query, kappa_rule, rule_on)
