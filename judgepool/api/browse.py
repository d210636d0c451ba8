"""What a person browses in a database: runs, queries and judges by name, labels by filter, one
pair with every label it got, each run's ranking of a query with its labels, and a person's
override that becomes the pair's effective label.

The dashboard's pages read these (cached by the database's version, ui/dashboard/data.py); a
notebook can too. Each call reads or writes in one short connection and returns plain values:
the types are pooling/audit/browse.py's, re-exported here so the layers above need not reach
below the api.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgepool.defaults import DEPTH, LEVEL, Level
from judgepool.pooling.audit.browse import (
    Facets,
    LabelDetail,
    LabelFilter,
    LabelListing,
    LabelRow,
    Pair,
    PairDetail,
    RankedDoc,
    SampledPair,
    audit_sample,
    list_labels,
    pair_detail,
    ranked_with_labels,
)
from judgepool.pooling.audit.browse import facets as label_facets
from judgepool.pooling.audit.browse import human_labelled as labelled_by_people
from judgepool.pooling.audit.overrides import Override, override_label
from judgepool.pooling.pool import PoolSummary
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.inventory import all_query_texts
from judgepool.pooling.store.judgments import JURY_PREFIX, labellers
from judgepool.pooling.store.judgments import default_level as level_with_labels

__all__ = [
    "Facets",
    "LabelDetail",
    "LabelFilter",
    "LabelListing",
    "LabelRow",
    "Override",
    "Pair",
    "PairDetail",
    "PoolSummary",
    "RankedDoc",
    "SampledPair",
    "default_level",
    "facets",
    "human_labelled",
    "is_jury",
    "judge_labellers",
    "judge_sample",
    "labels",
    "override",
    "pair",
    "query_texts",
    "rankings",
]

LIMIT = 500


def default_level(store: Store) -> Level:
    """The level to open on: the chunk level, unless every label is per document (the rule every
    command follows when no level is given)."""
    return level_with_labels(store)


def query_texts(store: Store) -> dict[str, str]:
    """qid -> text of every query that has one."""
    return all_query_texts(store)


def judge_labellers(store: Store, level: Level) -> list[str]:
    """The judges (not people) that labelled at `level`, most labels first."""
    return [name for source, name, _ in labellers(store, level) if source == "judge"]


def is_jury(labeller: str) -> bool:
    """Whether `labeller` names a jury's combined labels rather than one judge's."""
    return labeller.startswith(JURY_PREFIX)


def facets(store: Store, level: Level) -> Facets:
    """The values each label filter can take at `level` (for pickers)."""
    return label_facets(store, level)


def labels(
    store: Store, flt: LabelFilter, *, labeller: str | None = None, limit: int = LIMIT
) -> LabelListing:
    """The newest `limit` labels matching `flt`, and how many match in all; `labeller` is the
    judge whose labels count when the effective label is marked."""
    return list_labels(store, flt, labeller, limit)


def pair(
    store: Store, qid: str, doc_id: str, *, level: Level = LEVEL, labeller: str | None = None
) -> PairDetail:
    """One pair: its texts, where the runs rank it, and every label it got (newest first)."""
    return pair_detail(store, qid, doc_id, level, labeller)


def rankings(
    store: Store,
    runs: Sequence[str],
    qid: str,
    *,
    level: Level = LEVEL,
    labeller: str | None = None,
    depth: int = DEPTH,
) -> dict[str, list[RankedDoc]]:
    """Each run's top `depth` for query `qid`, every doc with its effective label (None: a
    hole)."""
    return ranked_with_labels(store, runs, qid, level, labeller, depth)


def override(
    store: Store,
    qid: str,
    doc_id: str,
    grade: int,
    user: str,
    *,
    note: str | None = None,
    level: Level = LEVEL,
    via: str = "library",
) -> Override:
    """Store `user`'s grade of a pair as a human label, which becomes its effective label (a pair
    no run ranks and no label names is refused: a typo in an id creates nothing)."""
    return override_label(store, qid, doc_id, grade, user, note, level=level, via=via)


def judge_sample(
    store: Store, per_grade: int, seed: int, *, level: Level = LEVEL, labeller: str | None = None
) -> list[SampledPair]:
    """Up to `per_grade` judge-labelled pairs of each judge grade, drawn with `seed` and shuffled,
    for a person to check (the same seed draws the same pairs)."""
    return audit_sample(store, per_grade, seed, level, labeller)


def human_labelled(store: Store, pairs: Iterable[Pair], *, level: Level = LEVEL) -> set[Pair]:
    """Which of `pairs` have a human label at `level` now."""
    return labelled_by_people(store, pairs, level)
