"""`judgepool audit sample|status` and the queue's labels: a recorded, seeded, uniform draw of
queries; what a person must label (blind, with texts, TSV escapes); progress; which queries count
as audited for a comparison; saving and undoing a queue grade.

tests/dashboard_db.py's database: six queries; on each, the judge labelled d00-d03 (which people
labelled too) and d10 (which nobody did): 5 judge-labelled pairs in the pool, 4 with a human label.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.errors import UsageError
from judgepool.pooling.audit.grades import save_audit_label, undo_audit_label
from judgepool.pooling.audit.samples import (
    audited_queries,
    evaluation_set,
    latest_sample,
    seeded_order,
)
from judgepool.pooling.export import export_labels
from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_texts import ingest_docs
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_db import QIDS

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def test_a_sample_is_a_recorded_seeded_uniform_draw(store: Store, cli: Cli) -> None:
    done = cli("audit", "sample", "--queries", "3", "--seed", "7")
    assert done.code == 0, done.err
    expected = seeded_order(list(QIDS), 7)[:3]
    sample = latest_sample(store, "chunk")
    assert sample is not None and list(sample.qids) == expected
    assert (sample.seed, sample.evaluation_set, sample.inclusion_probability) == (7, 6, 0.5)
    assert (sample.depth, sample.runs, sample.labeller) == (10, (), None)
    assert f"drew 3 of 6 queries (seed 7): audit sample #{sample.id}" in done.out
    assert "queries: " + " ".join(expected) in done.out
    assert (
        "to label: 15 judge-labelled pairs in their pool, 12 with a human label already, 3 "
        "left" in done.out
    )
    # The listing command names the database, so it can be copied as it is.
    assert (
        f"list them with: judgepool --db {store.path} audit sample --list --format tsv" in done.out
    )
    assert evaluation_set(store, "chunk") == sorted(QIDS)
    # The same draw again records nothing; a larger one keeps the first queries (nested).
    same = cli("audit", "sample", "--queries", "3", "--seed", "7")
    assert "is already this draw" in same.out and latest_sample(store, "chunk") == sample
    bigger = cli("audit", "sample", "--queries", "5", "--seed", "7")
    grown = latest_sample(store, "chunk")
    assert grown is not None and grown.id == sample.id + 1 and grown.qids[:3] == sample.qids
    assert "resized sample #1 from 3 to 5 queries" in bigger.out


def test_another_seed_or_size_is_refused_with_what_to_do(store: Store, cli: Cli) -> None:
    assert cli("audit", "sample", "--queries", "3", "--seed", "7").code == 0
    other = cli("audit", "sample", "--queries", "3", "--seed", "8")
    assert other.code == 2
    assert "an audit sample of 3 queries exists at the chunk level" in other.err
    assert "drawn with seed 7" in other.err and "pass --replace" in other.err
    replaced = cli("audit", "sample", "--queries", "3", "--seed", "8", "--replace")
    assert replaced.code == 0 and "drew 3 of 6 queries (seed 8)" in replaced.out
    too_many = cli("audit", "sample", "--queries", "7")
    assert too_many.code == 2 and "the evaluation set has 6 queries" in too_many.err
    assert cli("audit", "sample").code == 2  # neither --queries nor --list
    assert cli("audit", "status", "--level", "doc").code == 2  # no sample at the doc level


def test_the_listing_is_blind_with_texts_and_escapes(store: Store, cli: Cli, write: Writer) -> None:
    odd = "first line\nsecond\tcolumn \\ back"
    ingest_docs(store, write("odd.jsonl", json.dumps({"doc_id": "q2-d10", "text": odd}) + "\n"))
    assert cli("audit", "sample", "--queries", "6", "--seed", "1").code == 0
    listed = cli("audit", "sample", "--list", "--format", "tsv")
    assert listed.code == 0, listed.err
    header, *rows = listed.out.splitlines()
    assert header == "qid\tdoc_id\tquery\tpassage\thuman_grade"  # no judge grade: blind
    assert len(rows) == 6 and all(r.split("\t")[1].endswith("-d10") for r in rows)
    q2 = next(r for r in rows if r.startswith("q2\t"))
    assert q2 == "q2\tq2-d10\tquestion q2?\tfirst line\\nsecond\\tcolumn \\\\ back\t"
    assert "give them back as TREC qrels" in listed.err
    every = cli("audit", "sample", "--list", "--all", "--format", "jsonl")
    objects = [json.loads(line) for line in every.out.splitlines()]
    assert len(objects) == 30 and set(objects[0]) == {
        "qid",
        "doc_id",
        "query",
        "passage",
        "human_grade",
    }
    assert sum(o["human_grade"] is None for o in objects) == 6
    assert next(o for o in objects if o["doc_id"] == "q2-d10")["passage"] == odd


def test_status_follows_the_human_labels(store: Store, cli: Cli, write: Writer) -> None:
    assert cli("audit", "sample", "--queries", "2", "--seed", "3").code == 0
    sample = latest_sample(store, "chunk")
    assert sample is not None
    first, second = sample.qids
    status = cli("audit", "status")
    assert "0 of 2 queries fully audited; 8 of 10 pairs labelled, 2 left" in status.out
    assert "needs at least 2 fully audited queries" in status.err
    ingest_qrels(store, write("a.txt", f"{first} 0 {first}-d10 1\n"), labeller="ana")
    status = cli("audit", "status")
    assert "1 of 2 queries fully audited; 9 of 10 pairs labelled, 1 left" in status.out
    row = next(line.split() for line in status.out.splitlines() if line.startswith(first + " "))
    assert row == [first, "5", "5", "0", "yes"]
    db = jp.open(store.path)
    assert db.audit_status().audited == 1 and db.audit_pairs()["qid"].to_list() == [second]


def test_a_query_counts_as_audited_for_the_runs_compared(store: Store, write: Writer) -> None:
    # base ranks d00-d09 only: none of its judge-labelled pairs lacks a human label.
    assert audited_queries(store, ["q1", "q2"], "chunk", None, ["base"], 10) == {"q1", "q2"}
    # cand ranks d10 (judge only) on every query but q5.
    found = audited_queries(store, list(QIDS), "chunk", None, ["base", "cand"], 10)
    assert found == {"q5"}
    ingest_qrels(store, write("a.txt", "q1 0 q1-d10 2\n"), labeller="ana")
    assert audited_queries(store, ["q1", "q2"], "chunk", None, ["cand"], 10) == {"q1"}
    # Only the named judge's labels need auditing.
    assert audited_queries(store, ["q2"], "chunk", "someone-else", ["cand"], 10) == {"q2"}


def test_a_queue_grade_is_a_human_label_and_undo_removes_it(store: Store) -> None:
    saved = save_audit_label(store, 1, "q3", "q3-d10", 0, "ana")
    assert saved.labeller == "audit:ana" and saved.grade == 0
    assert "q3 0 q3-d10 0" in export_labels(store).decode()
    with store.read() as con:
        provenance = con.execute(
            "SELECT provenance FROM judgments WHERE id = ?", [saved.id]
        ).fetchone()
    assert provenance is not None
    expected = {
        "kind": "audit",
        "sample": 1,
        "user": "ana",
        "via": "dashboard",
        "judge_grade_hidden": True,
    }
    assert json.loads(provenance[0]) == expected
    later = save_audit_label(store, 1, "q3", "q3-d10", 2, "ana")
    with pytest.raises(UsageError, match="is not the newest audit label"):
        undo_audit_label(store, saved)
    undo_audit_label(store, later)
    assert "q3 0 q3-d10 0" in export_labels(store).decode()
    undo_audit_label(store, saved)
    assert "q3-d10" not in export_labels(store, "chunk", "human").decode()
    assert "q3 0 q3-d10 2" in export_labels(store).decode()  # the judge's label again
    with pytest.raises(UsageError, match="grade 5 is not one of"):
        save_audit_label(store, 1, "q3", "q3-d10", 5, "ana")
    with pytest.raises(UsageError, match="has whitespace"):
        save_audit_label(store, 1, "q3", "q3-d10", 1, "two words")
