"""What `judgepool demo` reads beyond the verbs it replays: the runs of a database it may
replace, the judge that filled the holes, and its two checks against labels the judge never saw
(data/qrels-doc.v2-only.txt).

We labelled every pair of the four demo runs' document-level depth-10 pool by reading, but the
demo ingests only the labels of the v1 runs' pool: the rest are the holes the judge fills. These
functions compare the judge's answers with our hidden labels (agreement on the holes) and redo
the comparison with our hidden labels in place of the judge's (what a person would conclude).
ui/commands/demo.py prints them.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.defaults import Level
from judgepool.pooling.io.readers import read_trec_qrels
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.labels_by_labeller import latest_label_rows, newest_labeller

if TYPE_CHECKING:
    from judgepool.metrics.agreement import Agreement
    from judgepool.metrics.compare import ComparisonFigures


def run_names(store: Store) -> set[str]:
    """The names of the runs in the database (none when there is no database yet)."""
    from judgepool.pooling.store.inventory import list_runs

    return {run.name for run in list_runs(store)}


def newest_judge(store: Store, level: Level) -> str | None:
    """The judge that wrote the latest judge label at `level` (None: no judge label)."""
    return newest_labeller(store, level, "judge")


@dataclass(frozen=True)
class HiddenAgreement:
    """How the judge's labels of the holes compare with our hidden labels of the same pairs."""

    judged: int  # judge labels written at the level
    compared: int  # of those, pairs we had labelled (and hid)
    agreement: Agreement


def hidden_agreement(store: Store, hidden: Path, level: Level, labeller: str) -> HiddenAgreement:
    """Pair every ok label of `labeller` with our hidden label of the same (qid, doc)."""
    import numpy as np

    from judgepool.metrics.agreement import agreement_from

    cols = read_trec_qrels(hidden)
    truth = {(q, d): g for q, d, g in zip(cols.qids, cols.doc_ids, cols.grades, strict=True)}
    found = latest_label_rows(store, level, "judge", labeller)
    rows = list(zip(found["qid"], found["doc_id"], found["grade"], strict=True))
    paired = [(truth[(q, d)], int(g)) for q, d, g in rows if (q, d) in truth]
    human = np.array([h for h, _ in paired], dtype=np.int64)
    judge = np.array([j for _, j in paired], dtype=np.int64)
    return HiddenAgreement(
        judged=len(rows),
        compared=len(paired),
        agreement=agreement_from(human, judge, level=level, labeller=labeller),
    )


@dataclass(frozen=True)
class PrintedStored:
    """What the judge's run said it labelled (`ok` pairs, as printed and recorded) and the pairs
    the database holds an ok label of by that judge: the demo stops when they differ."""

    printed: int | None  # None: no run of that judge was recorded
    stored: int


def printed_and_stored(store: Store, level: Level, labeller: str) -> PrintedStored:
    """The latest recorded run of `labeller` (its `ok` count) against its ok labels stored."""
    from judgepool.pooling.store.judge_runs import judge_runs

    runs = judge_runs(store, labeller)
    outcomes = runs[-1].outcome.get("outcomes", {}) if runs else None
    printed = int(outcomes.get("ok", 0)) if outcomes is not None else None
    stored = len(latest_label_rows(store, level, "judge", labeller)["qid"])
    return PrintedStored(printed, stored)


def comparison_with_hidden_labels(
    store: Store, hidden: Path, baseline: str, candidate: str, level: Level
) -> ComparisonFigures:
    """The comparison on a copy of the database where our hidden labels are ingested too.

    Human labels win over judge labels, so wherever we labelled a hole our grade is the one
    counted; the demo database itself is left as the judge filled it.
    """
    from judgepool.metrics.compare import compare
    from judgepool.metrics.spec import CompareSpec
    from judgepool.pooling.ingest_labels import ingest_qrels
    from judgepool.pooling.store.judgments import check_level

    with tempfile.TemporaryDirectory(prefix="judgepool-demo-") as folder:
        copy = Path(folder) / "with-hidden-labels.duckdb"
        shutil.copyfile(store.path, copy)
        wal = Path(f"{store.path}.wal")
        if wal.exists():
            shutil.copyfile(wal, Path(f"{copy}.wal"))
        scratch = Store(copy)
        ingest_qrels(scratch, hidden, level=level, labeller="reference-hidden")
        return compare(scratch, baseline, [candidate], CompareSpec(level=check_level(level)))
