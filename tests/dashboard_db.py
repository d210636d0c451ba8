"""A small database for the dashboard and export tests, with figures worked out by hand.

Six queries q1..q6, fifteen docs each (`qN-d00` .. `qN-d14`). Human qrels grade d00..d09 of
every query (grades 3 3 2 2 1 1 0 0 0 0); a judge labelled d10 (grade 2) of every query, and also
d00..d03 (to measure agreement with the humans); its answer for q1-d11 was unparseable (so
q1-d11 stays a hole). Three runs of ten docs per query:

- `base`  ranks d09 d08 ... d00 (worst first): fully judged, judged@10 = 1.0;
- `cand`  ranks d00 .. d08 then d10 (best first) on q1-q4 (wins), as `base` on q5 (a tie), and
  d06 d07 d08 d09 d05 d04 d03 d02 d01 d10 on q6 (a loss: it drops d00); judged by humans and the
  judge, judged@10 = 1.0;
- `weak`  ranks d05 .. d14: d05-d09 human, d10 judge, d11-d14 holes -> judged@10 = 0.6 and
  4 holes per query, 24 in all (under the 0.9 gate).

The passage of q1-d00 is Markdown and HTML on purpose: the Audit page must show it as text.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments

Writer = Callable[[str, str | bytes], Path]

QIDS = tuple(f"q{i}" for i in range(1, 7))
HUMAN_GRADES = (3, 3, 2, 2, 1, 1, 0, 0, 0, 0)
JUDGE = "openai/gpt-4o-mini@relevance-v1"
# The judge's grades for d00..d03 of each query (humans: 3 3 2 2): agreement data.
JUDGE_ON_HUMAN = (3, 2, 2, 3)
TRICKY_PASSAGE = "**bold?** <b>not html</b> [link](http://example.com) # not a heading"


def doc(qid: str, n: int) -> str:
    """The id of doc number `n` of query `qid`."""
    return f"{qid}-d{n:02d}"


BASE_ORDER = list(range(9, -1, -1))
CAND_ORDER = {q: [*range(9), 10] for q in QIDS[:4]} | {
    "q5": BASE_ORDER,
    "q6": [6, 7, 8, 9, 5, 4, 3, 2, 1, 10],
}
WEAK_ORDER = list(range(5, 15))


def run_text(name: str, orders: dict[str, list[int]]) -> str:
    """A TREC run ranking, for each query, the docs of `orders[qid]` (best first)."""
    return "".join(
        f"{q} Q0 {doc(q, n)} {rank} {100 - rank} {name}\n"
        for q in QIDS
        for rank, n in enumerate(orders[q], start=1)
    )


def provenance(qid: str, n: int) -> dict[str, object]:
    """What the LLM judge records with a label (model, prompt, parameters, cache key)."""
    return {
        "model": "openai/gpt-4o-mini",
        "prompt": {"name": "relevance", "version": "v1", "sha256": "3f2a9c"},
        "params": {"temperature": 0.0, "max_tokens": 64},
        "cache_key": f"k-{qid}-{n}",
        "api_base_host": "api.openai.com",
    }


def judge_labels() -> list[Judgment]:
    """The judge's labels described in the module docstring."""
    labels = []
    for q in QIDS:
        for n, grade in [*enumerate(JUDGE_ON_HUMAN), (10, 2)]:
            labels.append(
                Judgment(
                    qid=q,
                    doc_id=doc(q, n),
                    grade=grade,
                    source="judge",
                    labeller=JUDGE,
                    raw_output=f"Reasoning: the passage answers part of it.\nFinal score: {grade}",
                    tokens_in=412,
                    tokens_out=19,
                    cost=0.0000732,
                    latency_s=0.84,
                    provenance=provenance(q, n),
                )
            )
    labels.append(
        Judgment(
            qid="q1",
            doc_id=doc("q1", 11),
            grade=None,
            source="judge",
            labeller=JUDGE,
            status="unparsed",
            raw_output="I cannot decide <script>alert(1)</script>",
            provenance=provenance("q1", 11),
        )
    )
    return labels


def build(store: Store, write: Writer) -> Store:
    """Ingest queries, docs, qrels, the three runs and the judge labels."""
    ingest_queries(store, write("topics.tsv", "".join(f"{q}\tquestion {q}?\n" for q in QIDS)))
    docs = []
    for q in QIDS:
        for n in range(15):
            text = TRICKY_PASSAGE if (q, n) == ("q1", 0) else f"passage {n} about {q}"
            docs.append(json.dumps({"doc_id": doc(q, n), "text": text}) + "\n")
    ingest_docs(store, write("docs.jsonl", "".join(docs)))
    qrels = "".join(f"{q} 0 {doc(q, n)} {g}\n" for q in QIDS for n, g in enumerate(HUMAN_GRADES))
    ingest_qrels(store, write("qrels.txt", qrels), labeller="trec-assessors")
    every = dict.fromkeys(QIDS)
    ingest_run(store, write("base.trec", run_text("base", {q: BASE_ORDER for q in every})))
    ingest_run(store, write("cand.trec", run_text("cand", CAND_ORDER)))
    ingest_run(store, write("weak.trec", run_text("weak", {q: WEAK_ORDER for q in every})))
    write_judgments(store, judge_labels())
    return store


APP = Path(__file__).resolve().parent.parent / "judgepool" / "ui" / "app.py"
PAGES = ("runs", "compare", "audit", "export")


def new_app(timeout: float = 60) -> Any:
    """A new AppTest of the dashboard (not run yet).

    Each new AppTest scans every installed distribution's metadata for Streamlit components
    (about 0.3 s of CPU, ~440 packages); a served dashboard scans once at start-up. What is
    installed does not change during a test session, so the first scan's result serves the
    rest (the scan is Streamlit's own function, its result kept)."""
    from streamlit.components.v2 import manifest_scanner
    from streamlit.testing.v1 import AppTest

    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)
    # AppTest builds its session state outside a script run, which Streamlit logs as a warning
    # meant for bare-mode scripts; it says nothing about the app.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR
    )
    return AppTest.from_file(str(APP), default_timeout=timeout)


def open_page(page: str, timeout: float = 60, tab: str | None = None) -> Any:
    """An AppTest of the dashboard (JUDGEPOOL_DB = the test's database), run on `page`; `tab`:
    the Audit page's tab to open (only the open tab is drawn), as a person clicks it."""
    if page not in PAGES:
        raise ValueError(f"no page {page!r}")
    at = new_app(timeout)
    at.run()
    if page != "runs":
        at.switch_page(f"dashboard/{page}.py").run()
    if tab is not None:
        at.session_state["audit_tabs"] = tab
        at.run()
    return at


def texts_of(at: Any, kind: str) -> list[str]:
    """The values of every element of one kind (`text`, `code`, `error`, `caption` ...)."""
    return [str(el.value) for el in getattr(at, kind)]


def frames(at: Any, column: str) -> list[Any]:
    """The DataFrames shown that have `column`, in page order."""
    return [el.value for el in at.dataframe if column in el.value.columns]


def plain(markdown: str) -> str:
    """Markdown text without the backslash escapes the dashboard puts before data."""
    return re.sub(r"\\(.)", r"\1", markdown)


def charts(at: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The page's Altair charts: (Vega-Lite spec, rows of its first dataset) each."""
    import pyarrow as pa

    found = []
    for el in at.get("vega_lite_chart"):
        rows: list[dict[str, Any]] = []
        if el.proto.datasets:
            reader = pa.ipc.open_stream(el.proto.datasets[0].data.data)
            rows = reader.read_all().to_pylist()
        found.append((json.loads(el.proto.spec), rows))
    return found


def queue_button(at: Any, name: str) -> Any:
    """The labelling queue's button `name` (`grade_2`, `skip`, `undo`): the grade and skip
    buttons are the open pair's own, their keys end with a tag of the pair."""
    found = [b for b in at.button if b.key == f"queue_{name}" or b.key.startswith(f"queue_{name}_")]
    if len(found) != 1:
        raise LookupError(f"{len(found)} queue buttons {name!r} on the page")
    return found[0]
