"""`judgepool calibrate` (and db.calibrate): the figures by hand, Krippendorff's alpha against the
reference package and a worked example, the stratified sample, and the run through the fake
OpenAI server with exact call counts (cached pairs cost nothing; labels never become effective).

The collection: 4 queries, 16 pooled pairs with human grades h and passages marked
`[[grade=j]]` (the fake server's answer), so the judge-vs-human matrix is known:

    human 0: judge 0 0 2 0 1      -> row [3, 1, 1, 0]
    human 1: judge 1 0 2 1        -> row [1, 2, 1, 0]
    human 2: judge 2 3 1          -> row [0, 1, 1, 1]
    human 3: judge 3 3 2 3        -> row [0, 0, 1, 3]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import krippendorff
import numpy as np
import pytest

import judgepool as jp
from judgepool.metrics.calibration import calibration_figures, figures
from judgepool.pooling.audit.calibration_pairs import (
    HumanPair,
    calibration_runs,
    population,
    stratified_sample,
)
from judgepool.pooling.export import export_labels
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.pool import PoolSpec, pool_summary
from judgepool.pooling.store.connection import Store
from judgepool.stats.agreement import alpha_of_units, coincidences, confusion, krippendorff_alpha
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply

Cli = Callable[..., CliResult]
LABELLER = "openai/fake-model@relevance-v1"
Writer = Callable[[str, str | bytes], Path]

# (qid, doc, human grade, judge grade)
PAIRS = [
    ("q1", "d1", 0, 0),
    ("q1", "d2", 0, 0),
    ("q1", "d3", 0, 2),
    ("q1", "d4", 1, 1),
    ("q2", "d5", 1, 0),
    ("q2", "d6", 1, 2),
    ("q2", "d7", 2, 2),
    ("q2", "d8", 2, 3),
    ("q3", "d9", 2, 1),
    ("q3", "d10", 3, 3),
    ("q3", "d11", 3, 3),
    ("q3", "d12", 3, 2),
    ("q4", "d13", 0, 0),
    ("q4", "d14", 0, 1),
    ("q4", "d15", 1, 1),
    ("q4", "d16", 3, 3),
]
MATRIX = [[3, 1, 1, 0], [1, 2, 1, 0], [0, 1, 1, 1], [0, 0, 1, 3]]


def build(store: Store, write: Writer) -> Store:
    ingest_queries(store, write("t.tsv", "".join(f"q{i}\tquestion {i}\n" for i in range(1, 5))))
    docs = [json.dumps({"doc_id": d, "text": f"passage {d} [[grade={j}]]"}) for _, d, _, j in PAIRS]
    docs.append(json.dumps({"doc_id": "d17", "text": "passage d17 [[grade=1]]"}))
    ingest_docs(store, write("d.jsonl", "\n".join(docs) + "\n"))
    run = [f"{q} Q0 {d} {i} {100 - i} r" for i, (q, d, _, _) in enumerate(PAIRS, start=1)]
    ingest_run(store, write("r.trec", "\n".join([*run, "q4 Q0 d17 99 1 r"]) + "\n"))
    qrels = [f"{q} 0 {d} {h}" for q, d, h, _ in PAIRS]
    # d17: a grade outside 0-3 (left out); d99: labelled, in no run (not pooled).
    qrels += ["q4 0 d17 4", "q1 0 d99 2"]
    ingest_qrels(store, write("qrels.txt", "\n".join(qrels) + "\n"), labeller="assessors")
    return store


@pytest.fixture
def store(write: Writer) -> Store:
    return build(Store(), write)


def args(fake: FakeOpenAI, *extra: str) -> list[str]:
    return [
        "calibrate",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-progress",
        *extra,
    ]


def test_figures_equal_the_hand_computation() -> None:
    f = figures(MATRIX)
    assert f.pairs == 16 and f.exact == pytest.approx(9 / 16)
    # p_e = (5*4 + 4*4 + 3*4 + 4*4) / 16^2 = 0.25
    assert f.kappa == pytest.approx((9 / 16 - 0.25) / 0.75)
    # >= 1: [[3, 2], [1, 10]]; >= 2: [[7, 2], [1, 6]]; >= 3: [[11, 1], [1, 3]]
    assert f.kappa_at_least[1] == pytest.approx((13 / 16 - 152 / 256) / (1 - 152 / 256))
    assert f.kappa_at_least[2] == pytest.approx((13 / 16 - 0.5) / 0.5)
    assert f.kappa_at_least[3] == pytest.approx((14 / 16 - 160 / 256) / (1 - 160 / 256))
    # weighted disagreement: observed 10, expected 42
    assert f.kappa_quadratic == pytest.approx(1 - 10 / 42)
    # coincidences [[6,2,1,0],[2,4,2,0],[1,2,2,2],[0,0,2,6]], totals 9 8 7 8: 1 - 31 * 1251 / 163584
    assert f.alpha_ordinal == pytest.approx(1 - 31 * 1251 / 163584)
    assert f.hit_rate == pytest.approx([3 / 5, 2 / 4, 1 / 3, 3 / 4])
    assert f.lenient_rate == pytest.approx(2 / 9) and f.strict_rate == pytest.approx(1 / 7)


def test_reweighting_to_the_pools_grade_mix() -> None:
    human = [h for h, row in enumerate(MATRIX) for j, n in enumerate(row) for _ in range(n)]
    judge = [j for row in MATRIX for j, n in enumerate(row) for _ in range(n)]
    found = calibration_figures(human, judge, [10, 4, 3, 8])
    assert found.sample == figures(MATRIX) and found.graded_counts == [5, 4, 3, 4]
    # rows 0 and 3 doubled: [[6,2,2,0],[1,2,1,0],[0,1,1,1],[0,0,2,6]], 25 pairs
    pop = found.population
    assert pop.pairs == 25 and pop.exact == pytest.approx(15 / 25)
    assert pop.kappa == pytest.approx((0.6 - 164 / 625) / (1 - 164 / 625))
    assert pop.lenient_rate == pytest.approx(3 / 14) and pop.hit_rate == found.sample.hit_rate
    missing = calibration_figures([0, 0], [0, 1], [3, 0, 2, 0])
    assert missing.missing_grades == [2] and missing.population.pairs == 3


def test_krippendorff_alpha_worked_example_and_reference() -> None:
    # Two labellers, five units (0,0) (1,1) (2,2) (0,1) (2,0): coincidences
    # [[2,1,1],[1,2,0],[1,0,2]], totals 4 3 3, n = 10. Ordinal distances: d01 = 3.5^2,
    # d12 = 3^2, d02 = 6.5^2; observed 2 * (12.25 + 42.25) = 109, expected 2 * 735 = 1470.
    o = coincidences(confusion([0, 1, 2, 0, 2], [0, 1, 2, 1, 0], 3))
    assert o.tolist() == [[2, 1, 1], [1, 2, 0], [1, 0, 2]]
    assert krippendorff_alpha(o, "ordinal") == pytest.approx(1 - 9 * 109 / 1470)
    assert krippendorff_alpha(o, "nominal") == pytest.approx(1 - 9 * 4 / 66)
    rng = np.random.default_rng(7)
    for _ in range(100):
        data = rng.integers(0, 4, size=(int(rng.integers(2, 5)), int(rng.integers(3, 40))))
        data = data.astype(float)
        data[rng.random(data.shape) < 0.15] = np.nan
        for metric in ("nominal", "ordinal", "interval"):
            try:
                ref = krippendorff.alpha(
                    reliability_data=data, level_of_measurement=metric, value_domain=[0, 1, 2, 3]
                )
            except ValueError:  # the reference refuses data with a single value
                continue
            ours = alpha_of_units(data, 4, metric)
            assert (np.isnan(ref) and np.isnan(ours)) or ours == pytest.approx(ref, abs=1e-12)
    assert np.isnan(krippendorff_alpha(coincidences(confusion([2, 2], [2, 2]))))


def test_population_is_the_pooled_human_labels_of_grade_0_to_3(store: Store) -> None:
    found = population(store, depth=100)
    assert len(found.pairs) == 16 and found.excluded == 1  # d17 (grade 4); d99 is not pooled
    assert found.counts() == [5, 4, 3, 4]
    assert len(population(store, depth=2).pairs) == 8  # each query's top 2


def test_stratified_sample_is_even_seeded_and_shuffled() -> None:
    pairs = [HumanPair("q", f"d{i}", g) for i, g in enumerate([0] * 9 + [1] * 5 + [2] * 2)]
    drawn = stratified_sample(pairs, 9, seed=4)
    counts = [sum(p.grade == g for p in drawn) for g in (0, 1, 2)]
    assert counts == [4, 3, 2]  # 3 each; grade 2 has 2, so its third goes to grade 0
    assert stratified_sample(pairs, 9, seed=4) == drawn != stratified_sample(pairs, 9, seed=5)
    assert [p.grade for p in drawn] != sorted(p.grade for p in drawn)  # not grouped by grade
    assert len(stratified_sample(pairs, 100, seed=1)) == 16


@pytest.mark.slow
def test_calibrate_through_the_fake_server_exact_calls(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    before = export_labels(store)
    holes_before = pool_summary(store, PoolSpec(depth=100)).holes
    dry = cli(*args(fake, "--sample", "16", "--depth", "100", "--dry-run"))
    assert dry.code == 0, dry.err
    assert "16 pairs to re-judge, 0 already in the cache, 16 calls" in dry.out
    assert f"canaries for {LABELLER}: 8 pairs, 8 calls (0 in the cache)" in dry.out
    assert fake.calls == 0
    first = cli(*args(fake, "--sample", "16", "--depth", "100"))
    assert first.code == 0, first.err
    assert fake.calls == 24  # 16 sampled pairs, then 2 canaries on each of the 4 queries
    assert "16 calls, 0 pairs from the cache" in first.out
    assert "8 planted pairs of true grade 0 on 4 queries (seed 20240611); 8 calls" in first.out
    assert "5 / 4 / 3 / 4 (pool: 5 / 4 / 3 / 4)" in first.out
    lines = {line[:34].strip(): line[34:].split() for line in first.out.splitlines()}
    assert lines["exact agreement"] == ["0.562", "0.562"]
    assert lines["Cohen's kappa (grades 0-3)"] == ["0.417", "0.417"]
    assert lines["Krippendorff's alpha (ordinal)"] == ["0.763", "0.763"]
    assert "note: 1 pooled human labels have a grade outside 0-3: left out" in first.err
    # Cached pairs cost nothing: the same calibration again makes no call.
    again = cli(*args(fake, "--sample", "16", "--depth", "100"))
    assert again.code == 0 and fake.calls == 24
    assert "0 calls, 16 pairs from the cache" in again.out
    assert "8 planted pairs of true grade 0 on 4 queries (seed 20240611); 0 calls" in again.out
    # Calibration labels never count: the effective labels and the holes are unchanged.
    assert (
        export_labels(store) == before
        and pool_summary(store, PoolSpec(depth=100)).holes == holes_before
    )
    with store.read() as con:
        purposes = con.execute(
            "SELECT purpose, count(*) FROM judgments WHERE source = 'judge' GROUP BY 1"
        ).fetchall()
    assert sorted(purposes) == [("calibration", 32), ("canary", 16)]
    runs = calibration_runs(store)
    assert [r.id for r in runs] == [2, 1] and runs[0].labeller == LABELLER
    assert runs[0].prompt_hash is not None and runs[0].prompt_hash.startswith("sha256:")
    assert (runs[0].seed, runs[0].sample_size, runs[0].pairs, runs[0].depth) == (1, 16, 16, 100)
    stored = runs[0].figures["figures"]["sample"]
    assert stored["confusion"] == MATRIX and runs[0].figures["calls"] == 0
    assert runs[1].figures["calls"] == 16 and runs[1].figures["cached"] == 0
    canaries = runs[1].figures["canaries"]
    assert (canaries["planted"], canaries["calls"], canaries["queries"]) == (8, 8, 4)
    assert set(canaries["rates"]) == {"stuffing", "instruction", "fence"}


@pytest.mark.slow
def test_a_cap_and_parse_failures_are_counted(store: Store, fake: FakeOpenAI, cli: Cli) -> None:
    def reply(request: FakeRequest) -> Reply:
        if "passage d3 " in request.passage:
            return Reply("I would rather not say.")
        return default_reply(request)

    fake.reply = reply
    done = cli(
        *args(fake, "--sample", "16", "--depth", "100", "--concurrency", "1", "--no-canaries")
    )
    assert done.code == 4, done.out + done.err  # some pairs failed
    assert fake.calls == 17  # an unparsed answer is asked once more
    assert "parse failures and errors: 1 (unparsed 1)" in done.out
    (run,) = calibration_runs(store)
    assert run.figures["failures"] == {"unparsed": 1}
    assert run.figures["figures"]["sample"]["pairs"] == 15
    capped = cli(
        *args(
            fake,
            "--sample",
            "8",
            "--seed",
            "9",
            "--depth",
            "100",
            "--max-calls",
            "0",
            "--concurrency",
            "1",
        )
    )
    assert capped.code == 6, capped.err  # the cap stopped it (the rest came from the cache)
    assert fake.calls == 17 and "not attempted: 1" in capped.out  # d3: never answered
    # the cap stopped the sample: the canaries are not run (and cost nothing)
    assert (
        "canaries: 8 planned, not run: the run stopped before the sampled pairs were done"
        in capped.out
    )


@pytest.mark.slow
def test_the_library_calibrates_like_the_cli(store: Store, fake: FakeOpenAI) -> None:
    db = jp.open(store.path)
    report = db.calibrate("openai/fake-model", sample=16, depth=100, api_base=fake.api_base)
    assert report.problem is None and report.calls == 16 and fake.calls == 24  # 8 canaries
    assert report.canaries is not None and report.canaries.graded == 8
    assert report.figures is not None and report.figures.sample.confusion == MATRIX
    assert report.run_id == 1 and report.pool_counts == [5, 4, 3, 4]
    forecast = db.calibrate(
        "openai/fake-model", sample=16, depth=100, dry_run=True, api_base=fake.api_base
    )
    assert forecast.forecast is not None and forecast.forecast.cached_pairs == 16
    assert forecast.canary_forecast is not None and forecast.canary_forecast.cached_pairs == 8
    assert forecast.run_id is None and fake.calls == 24
    none = db.calibrate(
        "openai/fake-model", sample=16, depth=100, seed=2, canaries=0, api_base=fake.api_base
    )
    assert none.canaries is None and none.to_json()["canaries"] is None
