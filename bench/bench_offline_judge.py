"""Offline judge benchmark on TREC DL 2019 passage: label quality against hidden human labels,
run-order fidelity, nDCG@10 error, and speed (1,000 holes, model load included).

Quality protocol (issue 5), on ../shared/data/trec-dl:
- ingest the DL19 queries, passages and six runs; keep only the human labels of pairs inside the
  BM25 run's depth-10 pool (trec_eval order); every other label is hidden;
- fill the holes of the six runs' depth-10 pool with `judgepool judge --model offline` (the real
  loop, as library calls);
- report, side by side with leaving the holes unjudged (counted non-relevant): Cohen's kappa
  (4-level and binary, grade >= 2) between offline and hidden human labels on the holes that
  have a hidden label; Kendall tau between the six runs' nDCG@10 order under the full qrels and
  under the backfilled ones; the mean absolute error of each run's nDCG@10 against full qrels.
  An "oracle" column fills each hole with its hidden human label (0 when it has none): the
  error a perfect judge of these holes would still make, because the depth-10 pool misses
  relevant passages that the full qrels hold.
nDCG@10 is pytrec_eval's `ndcg_cut_10` (trec_eval), averaged over the 43 judged queries.

Other years (`--years dl19,dl20,dl21`): the same protocol on DL20 and DL21 (DL21 has three runs,
so its Kendall tau moves in steps of 2/3). Demo (`--demo`): the bundled collection in data/ as
`judgepool demo` builds it (topics, v1 and v2 chunks, four runs, the v1-pool labels at the
document level); the judge fills the doc-level depth-10 holes of dense-v2 (what the demo does),
then, in a fresh database, those of dense-v2 and bm25-v2 together; its labels are compared with
our hidden labels of the same pairs (data/qrels-doc.v2-only.txt, never shown to the judge), and
each v2 run's nDCG@10 gain over its v1 run is computed under the judge's labels and under ours.

Speed: a fresh process labels the first 1,000 holes of the six runs' depth-20 pool, cold
embedding cache, timed from before torch is imported to the last label written; then again
on a fresh copy of the database with the cache warm.

    .venv/bin/python bench/bench_offline_judge.py            # both -> results/offline_judge.json
    .venv/bin/python bench/bench_offline_judge.py --quality  # the quality table only
    .venv/bin/python bench/bench_offline_judge.py --quality --years dl19,dl20,dl21 --demo
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
DEFAULT_DATA = REPO.parent / "shared" / "data"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def trec_dl(data: Path | None = None) -> Path | None:
    """The trec-dl folder of the shared data, or None when absent."""
    root = data or Path(os.environ.get("JUDGEPOOL_SHARED_DATA", DEFAULT_DATA))
    folder = root / "trec-dl"
    return folder if (folder / "qrels" / "qrels.dl19-passage.txt").is_file() else None


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels as {qid: {doc_id: grade}}."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, _, doc_id, grade = line.split()
            qrels.setdefault(qid, {})[doc_id] = int(grade)
    return qrels


def run_name(path: Path) -> str:
    """`dl19-passage.bm25.top100.trec` -> `bm25`."""
    return path.name.split(".")[1]


YEARS = {
    "dl19": ("topics.dl19-passage.judged.tsv", "msmarco-v1-passages.dl19-dl20-runs.jsonl"),
    "dl20": ("topics.dl20-passage.judged.tsv", "msmarco-v1-passages.dl19-dl20-runs.jsonl"),
    "dl21": ("topics.dl21.txt", "msmarco-v2-passages.dl21-runs.jsonl"),
}


def build_store(
    dl: Path, folder: Path, year: str = "dl19", visible_run: str = "bm25", visible_depth: int = 10
) -> Any:
    """A database with one year's texts and runs, and only the labels inside `visible_run`'s
    top `visible_depth` (the rest hidden). Returns the Store."""
    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.ingest_runs import ingest_run
    from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
    from judgepool.pooling.rankings import rankings_sql, run_keys
    from judgepool.pooling.store.connection import Store

    topics, passages = YEARS[year]
    store = Store(folder / f"{year}.duckdb")
    ingest_queries(store, dl / "topics" / topics)
    ingest_docs(store, dl / "passages" / passages)
    for path in sorted((dl / "runs" / year).glob("*.trec")):
        ingest_run(store, path, name=run_name(path))
    key = run_keys(store, [visible_run])[visible_run]
    with store.read() as con:
        top = {
            (str(q), str(d))
            for q, d in con.execute(
                f"SELECT qid, doc_id FROM ({rankings_sql('chunk', [key], visible_depth)})"
            ).fetchall()
        }
    full = read_qrels(dl / "qrels" / f"qrels.{year}-passage.txt")
    visible = folder / "qrels.visible.txt"
    visible.write_text(
        "".join(
            f"{q} 0 {d} {g}\n"
            for q, docs in sorted(full.items())
            for d, g in sorted(docs.items())
            if (q, d) in top
        ),
        encoding="utf-8",
    )
    ingest_qrels(store, visible, labeller=f"{year}-{visible_run}-top{visible_depth}")
    return store


def fill_holes(
    store: Any,
    depth: int = 10,
    limit: int | None = None,
    model: str = "offline",
    runs: Sequence[str] = (),
    level: str = "chunk",
) -> dict[str, Any]:
    """Label the holes of the depth-`depth` pool of `runs` (every run when empty; the first
    `limit` holes only, when given) with the real loop; returns the loop's stats and the judge's
    description."""
    from judgepool.judge.cache import JudgeCache
    from judgepool.judge.loop import LoopOptions
    from judgepool.judge.registry import make_judge
    from judgepool.judge.requests import build_requests
    from judgepool.judge.run.plan import Plan, backfill, plan_holes

    plan = plan_holes(store, depth=depth, runs=runs, level=level)
    if limit is not None:
        holes = plan.holes[:limit]
        plan = Plan(
            plan.level,
            depth,
            plan.runs,
            holes,
            build_requests(store, holes, plan.level),
            plan.passage_tokens,
        )
    judge = make_judge(model)
    with JudgeCache() as cache:
        stats = backfill(store, judge, plan, LoopOptions(), cache)
    if stats.fatal is not None:
        raise stats.fatal
    return {
        "holes": len(plan.holes),
        "labeller": judge.labeller,
        "describe": judge.describe(),
        "outcomes": dict(stats.outcomes),
        "grades": dict(sorted(stats.grades.items())),
        "cached": stats.cached,
        "elapsed_s": stats.elapsed_s,
    }


def judge_labels(store: Any, labeller: str) -> dict[tuple[str, str], tuple[int, str]]:
    """(qid, doc_id) -> (grade, raw_output) of the latest ok label of `labeller`."""
    with store.read() as con:
        rows = con.execute(
            "SELECT qid, doc_id, arg_max(grade, id), arg_max(raw_output, id) FROM judgments "
            "WHERE labeller = ? AND status = 'ok' GROUP BY qid, doc_id",
            [labeller],
        ).fetchall()
    return {(str(q), str(d)): (int(g), str(raw)) for q, d, g, raw in rows}


def _runs_for_eval(dl: Path, year: str) -> dict[str, dict[str, dict[str, float]]]:
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for path in sorted((dl / "runs" / year).glob("*.trec")):
        run: dict[str, dict[str, float]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            qid, _, doc_id, _, score, _ = line.split()
            run.setdefault(qid, {})[doc_id] = float(score)
        runs[run_name(path)] = run
    return runs


def ndcg10(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> float:
    """Mean nDCG@10 (trec_eval's ndcg_cut_10 via pytrec_eval) over the queries of `qrels`."""
    import pytrec_eval

    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return sum(v["ndcg_cut_10"] for v in scores.values()) / len(qrels)


def _merge(
    base: dict[str, dict[str, int]], extra: dict[tuple[str, str], int]
) -> dict[str, dict[str, int]]:
    merged = {q: dict(docs) for q, docs in base.items()}
    for (q, d), g in extra.items():
        merged.setdefault(q, {})[d] = g
    return merged


def _rules(offline: dict[tuple[str, str], tuple[int, str]]) -> dict[str, int]:
    """How many labels each rule of the method gave (read from the labels' raw output)."""
    rules: dict[str, int] = {}
    for _, raw in offline.values():
        rule = json.loads(raw)["rule"]
        rules[rule] = rules.get(rule, 0) + 1
    return dict(sorted(rules.items()))


def measure(dl: Path, folder: Path, year: str = "dl19") -> dict[str, Any]:
    """The quality protocol of the module docstring (on `year`); returns every figure."""
    from scipy.stats import kendalltau

    from judgepool.stats.agreement import binary, cohen_kappa

    store = build_store(dl, folder, year)
    started = time.perf_counter()
    filled = fill_holes(store, depth=10)
    seconds = time.perf_counter() - started
    offline = judge_labels(store, filled["labeller"])
    full = read_qrels(dl / "qrels" / f"qrels.{year}-passage.txt")
    visible = read_qrels(folder / "qrels.visible.txt")
    full = {q: docs for q, docs in full.items() if q in visible}
    holes = sorted(offline)
    oracle = {h: full.get(h[0], {}).get(h[1], 0) for h in holes}
    qrels = {
        "full": full,
        "unjudged": visible,
        "backfilled": _merge(visible, {h: g for h, (g, _) in offline.items()}),
        "oracle": _merge(visible, oracle),
    }
    runs = _runs_for_eval(dl, year)
    names = sorted(runs)
    ndcg = {kind: {n: ndcg10(q, runs[n]) for n in names} for kind, q in qrels.items()}
    truth = [(full[q][d], offline[(q, d)][0]) for q, d in holes if d in full.get(q, {})]
    human = [t for t, _ in truth]
    judged = [o for _, o in truth]

    def side(kind: str) -> dict[str, float]:
        ref = [ndcg["full"][n] for n in names]
        got = [ndcg[kind][n] for n in names]
        return {
            "kendall_tau": float(kendalltau(ref, got).statistic),
            "ndcg10_mae": sum(abs(a - b) for a, b in zip(ref, got, strict=True)) / len(ref),
        }

    return {
        "collection": f"TREC {year.upper()} passage ({len(full)} queries), {len(runs)} runs",
        "visible_labels": "human labels inside the BM25 run's depth-10 pool",
        "visible_pairs": sum(len(d) for d in visible.values()),
        "holes": len(holes),
        "holes_with_hidden_label": len(truth),
        "labeller": filled["labeller"],
        "calibration": filled["describe"].get("calibration"),
        "rules": _rules(offline),
        "grades_offline": filled["grades"],
        "kappa_4level": cohen_kappa(human, judged),
        "kappa_binary": cohen_kappa(binary(human), binary(judged), 2),
        "unjudged": side("unjudged"),
        "backfilled": side("backfilled"),
        "oracle": side("oracle"),
        "ndcg10": ndcg,
        "fill_seconds": seconds,
        "batch": filled["describe"].get("batch"),
    }


def print_quality(result: dict[str, Any]) -> None:
    """The side-by-side table."""
    print(
        f"{result['collection']}; visible: {result['visible_labels']} "
        f"({result['visible_pairs']} pairs)"
    )
    print(
        f"holes filled: {result['holes']} ({result['holes_with_hidden_label']} with a hidden "
        f"human label); labeller {result['labeller']}; rules {result['rules']}"
    )
    print(f"calibration: {json.dumps(result['calibration'])}")
    print(
        f"kappa offline vs hidden human labels: 4-level {result['kappa_4level']:.3f}, "
        f"binary (>=2) {result['kappa_binary']:.3f}"
    )
    print(f"{'run':14s} {'full qrels':>10s} {'unjudged':>9s} {'backfilled':>10s} {'oracle':>7s}")
    for name in sorted(result["ndcg10"]["full"]):
        row = [result["ndcg10"][k][name] for k in ("full", "unjudged", "backfilled", "oracle")]
        print(f"{name:14s} {row[0]:10.4f} {row[1]:9.4f} {row[2]:10.4f} {row[3]:7.4f}")
    for measure_name, label in (
        ("kendall_tau", "Kendall tau vs full"),
        ("ndcg10_mae", "nDCG@10 MAE vs full"),
    ):
        values = [result[k][measure_name] for k in ("unjudged", "backfilled", "oracle")]
        print(
            f"{label:20s} unjudged {values[0]:.3f}  backfilled {values[1]:.3f}  "
            f"oracle {values[2]:.3f}"
        )


def speed_child(db: str, limit: int) -> None:
    """Timed in a fresh process: label the first `limit` holes at depth 20 (prints JSON)."""
    started = time.perf_counter()
    preloaded = "torch" in sys.modules
    from judgepool.pooling.store.connection import Store

    filled = fill_holes(Store(db), depth=20, limit=limit)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "cpu_seconds": time.process_time(),
                "torch_preloaded": preloaded,
                "holes": filled["holes"],
                "outcomes": filled["outcomes"],
                "batch": filled["describe"].get("batch"),
                "threads": filled["describe"].get("threads"),
                "precision": filled["describe"]["parameters"]["precision"],
            }
        )
    )


def speed(dl: Path, folder: Path, limit: int = 1000) -> dict[str, Any]:
    """Cold-cache and warm-cache runs of `speed_child`, each in a fresh process and database."""
    build_store(dl, folder)
    pristine = folder / "dl19.pristine.duckdb"
    shutil.copy(folder / "dl19.duckdb", pristine)
    env = {**os.environ, "JUDGEPOOL_CACHE_DIR": str(folder / "cache")}
    out: dict[str, Any] = {}
    for label in ("cold_cache", "warm_cache"):
        db = folder / f"{label}.duckdb"
        shutil.copy(pristine, db)
        done = subprocess.run(
            [sys.executable, __file__, "--speed-child", str(db), "--limit", str(limit)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out[label] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quality", action="store_true", help="only the quality table")
    parser.add_argument("--speed", action="store_true", help="only the speed runs")
    parser.add_argument("--speed-child", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=1000, help="holes in the speed runs")
    parser.add_argument(
        "--years",
        default="dl19",
        help="comma-separated TREC DL years for the quality protocol (dl19)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="also score the judge on the demo collection's hidden labels",
    )
    args = parser.parse_args(argv)
    if args.speed_child:
        speed_child(args.speed_child, args.limit)
        return
    years = [y.strip() for y in args.years.split(",") if y.strip()]
    unknown = sorted(set(years) - set(YEARS))
    if unknown:
        parser.error(f"unknown year(s) {', '.join(unknown)}; known: {', '.join(YEARS)}")
    dl = trec_dl()
    if dl is None and not args.demo:
        print("skipped: ../shared/data/trec-dl is absent (set JUDGEPOOL_SHARED_DATA)")
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    result: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_1min": os.getloadavg()[0],
        }
    }
    with tempfile.TemporaryDirectory(prefix="judgepool-offline-bench-") as tmp:
        os.environ["JUDGEPOOL_CACHE_DIR"] = str(Path(tmp) / "quality-cache")
        if not args.speed and dl is not None:
            for year in years:
                (Path(tmp) / year).mkdir()
                measured = measure(dl, Path(tmp) / year, year)
                print_quality(measured)
                if year == "dl19":
                    result["quality"] = measured
                else:
                    result.setdefault("quality_by_year", {})[year] = measured
        if args.demo and not args.speed:
            from offline_demo import measure_demo, print_demo  # bench/ is this script's folder

            result["demo"] = [
                measure_demo(Path(tmp) / f"demo-{i}", runs)
                for i, runs in enumerate((["dense-v2"], ["dense-v2", "bm25-v2"]))
            ]
            for measured in result["demo"]:
                print_demo(measured)
        if not args.quality and dl is not None:
            (Path(tmp) / "speed").mkdir()
            result["speed"] = speed(dl, Path(tmp) / "speed", args.limit)
            for label, run in result["speed"].items():
                print(
                    f"speed ({label}): {run['holes']} holes in {run['seconds']:.1f} s wall, "
                    f"{run['cpu_seconds']:.1f} s CPU in the process "
                    f"(batch {run['batch']}, precision {run['precision']})"
                )
    result["targets"] = targets(result)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "offline_judge.json"
    previous = json.loads(target.read_text()) if target.exists() else {}
    merged = {
        **previous,
        **result,  # a partial run keeps the other parts' targets
        "targets": {**previous.get("targets", {}), **result["targets"]},
    }
    target.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n")
    print(f"wrote {target.relative_to(REPO)}")
    missed = [name for name, met in result["targets"].items() if not met]
    if missed:
        print(f"missed targets: {', '.join(missed)}")
        raise SystemExit(1)


def targets(result: dict[str, Any]) -> dict[str, bool]:
    """Issue 5's targets, for the parts that were run."""
    met: dict[str, bool] = {}
    if "quality" in result:
        quality = result["quality"]
        met["kendall_tau >= 0.85"] = quality["backfilled"]["kendall_tau"] >= 0.85
        met["MAE backfilled < unjudged"] = (
            quality["backfilled"]["ndcg10_mae"] < quality["unjudged"]["ndcg10_mae"]
        )
    if "speed" in result:
        met["1,000 holes < 30 s (cold cache)"] = result["speed"]["cold_cache"]["seconds"] < 30
    return met


if __name__ == "__main__":
    main()
