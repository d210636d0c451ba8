"""Each measure's possible range (metrics/ranges.py) holds for the values judgepool computes:
every per-query value of every ranged measure, on random collections with negative grades, ties
and missing queries, lies in the range the floors are checked against (issue 22.5)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from judgepool.metrics.evaluate import evaluate
from judgepool.metrics.measures import parse_measure
from judgepool.metrics.ranges import COUNT, UNIT, value_range
from judgepool.metrics.spec import EvalSpec
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store

RANGED = [
    "nDCG@10", "R(rel=3)@10", "nR@10", "Judged@10", "P@5", "AP", "RR@10", "Rprec",
    "Success@10", "Bpref", "infAP", "IPrec@0.2", "Accuracy", "Compat", "SetP", "SetR",
    "SetF", "SetAP", "NumRet", "NumRel",
]  # fmt: skip


def _collection(tmp_path: Path, seed: int) -> Store:
    rng = random.Random(seed)
    qrels, rows = [], []
    for q in range(10):
        docs = [f"d{q}_{i}" for i in range(30)]
        qrels += [f"q{q} 0 {d} {rng.choice([-1, 0, 0, 1, 2, 3])}" for d in rng.sample(docs, 12)]
        if q != 4:  # the run misses q4
            for rank, doc in enumerate(rng.sample(docs, 20), start=1):
                rows.append(f"q{q} Q0 {doc} {rank} {round(rng.uniform(0, 3), 1)} r")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "r.trec").write_text("\n".join(rows) + "\n")
    store = Store(tmp_path / "ranges.duckdb")
    ingest_qrels(store, tmp_path / "qrels.txt")
    ingest_run(store, tmp_path / "r.trec", name="r")
    return store


@pytest.mark.parametrize("seed", [1, 2])
def test_every_value_lies_in_its_measures_range(tmp_path: Path, seed: int) -> None:
    store = _collection(tmp_path, seed)
    ev = evaluate(store, spec=EvalSpec(measures=tuple(RANGED), resamples=50))
    seen = 0
    for values in ev.per_query("r").values():
        for name, value in values.items():
            known = value_range(parse_measure(name))
            assert known is not None, name
            if value is not None:
                assert value in known, (name, value)
                seen += 1
    assert seen > 150


def test_the_ranges_of_shares_counts_and_unknowns() -> None:
    assert value_range(parse_measure("MAP")) == UNIT  # ir-measures' alias of AP
    assert value_range(parse_measure("NumQ")) == COUNT
    assert str(UNIT) == "[0, 1]" and str(COUNT) == "0 or more"
    assert 1.0 in UNIT and 0.0 in UNIT and 1.0001 not in UNIT and float("nan") not in UNIT
    assert 10**6 in COUNT and -1 not in COUNT
