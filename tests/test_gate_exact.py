"""The judged@k gate is one rule on the exact fraction: the CLI and every page give one answer.

Each scenario is a database whose run `edge` lands on a chosen judged@10, built from per-query
(labelled, shown) counts; the run `base` is fully judged:
- `exact`: 9 of 10 on each of 10 queries: exactly 0.9, passes;
- `ulp`: 6, 7, 9, 10, 10, 10, 10, 10 of 10: exactly 0.9 again, but the float mean of the
  per-query fractions is 0.8999999999999999 (one ulp under): passes;
- `0.89980`: 2/3, 6/7, 7/8, 1, 1, 1: under the gate, yet 0.900 at three decimals: refused;
- `0.89974`: 6/7, 6/7, 7/8, 7/8, 9/10, 9/10, 5/6, 1, 1: under, 0.900 at three decimals: refused.
A value shown for a refused run must never read as 0.900 (nor one that passes as under 0.9).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_db import frames, open_page, plain, texts_of

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

SCENARIOS: dict[str, list[tuple[int, int]]] = {
    "exact": [(9, 10)] * 10,
    "ulp": [(6, 10), (7, 10), (9, 10)] + [(10, 10)] * 5,
    "0.89980": [(2, 3), (6, 7), (7, 8), (1, 1), (1, 1), (1, 1)],
    "0.89974": [(6, 7), (6, 7), (7, 8), (7, 8), (9, 10), (9, 10), (5, 6), (1, 1), (1, 1)],
}
GATE = Fraction(9, 10)


def exact(counts: list[tuple[int, int]]) -> Fraction:
    return sum((Fraction(a, s) for a, s in counts), Fraction(0)) / len(counts)


def test_the_scenarios_are_what_they_claim() -> None:
    assert exact(SCENARIOS["exact"]) == exact(SCENARIOS["ulp"]) == GATE
    assert float(np.mean([a / s for a, s in SCENARIOS["ulp"]])) == 0.8999999999999999
    for name in ("0.89980", "0.89974"):
        value = exact(SCENARIOS[name])
        assert value < GATE and f"{float(value):.3f}" == "0.900"
        assert f"{float(value):.5f}" == name


def build(write: Writer, counts: list[tuple[int, int]]) -> Store:
    """qN has ten labelled docs jN (grade 1, j0 grade 3); `edge` shows s docs of which l are
    labelled on query N; `base` ranks the ten labelled docs."""
    store = Store()
    qids = [f"q{n}" for n in range(1, len(counts) + 1)]
    qrels = "".join(f"{q} 0 {q}-j{j} {3 if j == 0 else 1}\n" for q in qids for j in range(10))
    ingest_qrels(store, write("qrels.txt", qrels))
    base = "".join(f"{q} Q0 {q}-j{j} {j + 1} {10 - j} base\n" for q in qids for j in range(10))
    ingest_run(store, write("base.trec", base))
    lines = []
    for q, (labelled, shown) in zip(qids, counts, strict=True):
        docs = [f"{q}-j{j}" for j in range(labelled)]
        docs += [f"{q}-u{j}" for j in range(shown - labelled)]
        lines += [f"{q} Q0 {d} {r + 1} {100 - r} edge\n" for r, d in enumerate(docs)]
    ingest_run(store, write("edge.trec", "".join(lines)))
    return store


def reads_as_passing(shown: str) -> bool:
    """Whether a judged@10 printed as `shown` reads as at or over the gate."""
    return Fraction(shown) >= GATE


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_cli_commands_agree_on_the_gate(scenario: str, write: Writer, cli: Cli) -> None:
    counts = SCENARIOS[scenario]
    passes = exact(counts) >= GATE
    build(write, counts)

    compared = cli("compare", "base", "edge", "--resamples", "50")
    assert compared.code == (0 if passes else 3), compared.err
    if not passes:
        found = re.search(r"edge: judged@10 ([0-9.]+)", compared.err)
        assert found is not None, compared.err
        assert not reads_as_passing(found[1]), compared.err

    as_json = cli("compare", "base", "edge", "--resamples", "50", "--format", "json")
    report = json.loads(as_json.out)
    assert [r["run"] for r in report["refused"]] == ([] if passes else ["edge"])

    pooled = cli("pool", "--run", "edge")
    row = next(line for line in pooled.out.splitlines() if line.startswith("edge "))
    assert reads_as_passing(row.split()[3]) == passes, pooled.out

    evaluated = cli("eval", "--run", "edge", "--resamples", "50")
    row = next(line for line in evaluated.out.splitlines() if line.startswith("edge "))
    judged = re.findall(r"([0-9.]+) \[", row)[-1]  # the last measure column is Judged@10
    assert reads_as_passing(judged) == passes, evaluated.out


@pytest.mark.slow
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_page_agrees_with_the_cli(scenario: str, write: Writer) -> None:
    counts = SCENARIOS[scenario]
    passes = exact(counts) >= GATE
    build(write, counts)

    runs = open_page("runs")
    assert not runs.exception, [e.value for e in runs.exception]
    (table,) = frames(runs, "Judged@10")
    row = table[table["run"] == "edge"].iloc[0]
    assert reads_as_passing(str(row["Judged@10"])) == passes, row.to_dict()
    assert row["gate"] == ("ok (≥ 0.9)" if passes else "UNDER 0.9")
    warned = any("edge" in plain(w) and "under the" in plain(w) for w in texts_of(runs, "warning"))
    assert warned == (not passes)

    compare = open_page("compare")
    assert not compare.exception, [e.value for e in compare.exception]
    assert compare.multiselect(key="compare_candidates").value == ["edge"]
    banners = [plain(e) for e in texts_of(compare, "error")]
    assert bool(banners) == (not passes), banners
    if banners:
        found = re.search(r"edge: judged@10 ([0-9.]+)", banners[0])
        assert found is not None and not reads_as_passing(found[1]), banners[0]
    else:
        assert frames(compare, "verdict")
