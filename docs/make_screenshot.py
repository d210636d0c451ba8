"""Make docs/dashboard.png: the Compare page on TREC DL 2019, holes filled by the offline judge.

Builds a fresh database from ../shared/data (the six DL19 runs, their qrels and passages), runs
`judgepool judge --model offline` (unless --no-judge), serves `judgepool ui` on a free port and
saves a headless-Chromium screenshot of the Compare page (BM25 against TAS-B and SPLADE++: each
run's means with intervals, markers and bounds, the paired differences, the per-query chart and
one query's two rankings open), opened from a link as a reviewer would.

Run: .venv/bin/python docs/make_screenshot.py [--no-judge] [--out docs/dashboard.png]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.dashboard_browser import capture, find_chromium, free_port, serve_dashboard  # noqa: E402

DL = Path(os.environ.get("JUDGEPOOL_SHARED_DATA", REPO.parent / "shared" / "data")) / "trec-dl"
# Run names are the runs' tags (the files' sixth column), not the file names.
BASELINE = "rankllm-bm25"
CANDIDATES = ("rankllm-tasb", "rankllm-splade-pp-ed")
QUERY = "1037798"  # "who is robert gray": TAS-B's top 10 has judge-labelled docs


def build(db: Path, judge: bool) -> None:
    judgepool = [sys.executable, "-m", "judgepool.ui.cli", "--db", str(db)]
    steps = [
        ["ingest", "queries", str(DL / "topics" / "topics.dl19-passage.txt")],
        ["ingest", "docs", str(DL / "passages" / "msmarco-v1-passages.dl19-dl20-runs.jsonl")],
        ["ingest", "qrels", str(DL / "qrels" / "qrels.dl19-passage.txt")],
        ["ingest", "run", *sorted(str(p) for p in (DL / "runs" / "dl19").glob("*.trec"))],
    ]
    if judge:
        steps.append(["judge", "--model", "offline", "--depth", "10"])
    for step in steps:
        subprocess.run([*judgepool, *step], cwd=REPO, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "dashboard.png")
    parser.add_argument("--no-judge", action="store_true", help="human labels only")
    args = parser.parse_args()
    browser = find_chromium()
    if browser is None:
        raise SystemExit("no Chromium found: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "dl19.duckdb"
        build(db, judge=not args.no_judge)
        port = free_port()
        query = urlencode(
            [
                ("level", "chunk"),
                ("baseline", BASELINE),
                *(("candidate", c) for c in CANDIDATES),
                ("measure", "nDCG@10"),
                ("chart", CANDIDATES[0]),
                ("query", QUERY),
            ]
        )
        with serve_dashboard(db, port):
            text = capture(
                browser,
                f"http://127.0.0.1:{port}/compare?{query}",
                args.out,
                "Paired differences from",
                charts=1,
                size=(1400, 2250),
            )
        if "was left out" in text:
            raise SystemExit(f"the link named something the database lacks: {text[:800]}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
