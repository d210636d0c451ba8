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

import numpy as np
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
from tests.dashboard_db import QIDS, build

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
        "to label: 15 judge-labelled pairs of theirs (every judge label their measures read), "
        "12 with a human label already, 3 left" in done.out
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


def test_a_query_is_audited_once_every_judge_label_it_reads_is_a_persons(
    store: Store, write: Writer
) -> None:
    # d10 of every query has only the judge's label. base never ranks it, but nDCG's ideal
    # ranking and the recall denominators of base read it too: no query is audited yet, for
    # any run (issue 21: counting a query audited once the compared runs' top 10 was labelled
    # left the judge's grades inside the "human" values).
    assert audited_queries(store, list(QIDS), "chunk", None) == set()
    ingest_qrels(store, write("a.txt", "q1 0 q1-d10 2\n"), labeller="ana")
    assert audited_queries(store, ["q1", "q2"], "chunk", None) == {"q1"}
    # Only the named judge's labels need auditing.
    assert audited_queries(store, ["q2"], "chunk", "someone-else") == {"q2"}


def test_the_listing_holds_every_judge_label_the_measures_read(
    store: Store, cli: Cli, write: Writer
) -> None:
    """`--run base --run cand` used to list only the pairs those runs rank in their top 10;
    the judge's grades of weak's d11-d14 then stayed in the "human" values through the ideal
    ranking. Now they are listed (after the runs' own pairs), and once every listed pair has
    its true grade, the audited queries' values are exactly those of the true labels."""
    from judgepool.metrics.evaluate import evaluate
    from judgepool.pooling.store.judgments import Judgment, write_judgments

    judge = [
        Judgment(qid=q, doc_id=f"{q}-d{n:02d}", grade=3, source="judge", labeller="j2")
        for q in QIDS
        for n in (11, 12, 13, 14)
    ]
    write_judgments(store, judge)
    drawn = cli(
        "audit", "sample", "--queries", "2", "--seed", "5", "--run", "base", "--run", "cand"
    )
    assert drawn.code == 0, drawn.err
    sample = latest_sample(store, "chunk")
    assert sample is not None
    listing = cli("audit", "sample", "--list", "--format", "jsonl")
    listed = [json.loads(line) for line in listing.out.splitlines()]
    for q in sample.qids:
        docs = [o["doc_id"] for o in listed if o["qid"] == q]
        # the runs' own judge pair first, then the pairs no compared run ranks
        assert docs == [f"{q}-d10", f"{q}-d11", f"{q}-d12", f"{q}-d13", f"{q}-d14"], docs
    truth = {n: 0 for n in (10, 11, 12, 13, 14)} | {11: 1}
    lines = "".join(f"{q} 0 {q}-d{n:02d} {g}\n" for q in sample.qids for n, g in truth.items())
    ingest_qrels(store, write("truth.txt", lines), labeller="ana")
    assert audited_queries(store, list(QIDS), "chunk", None) == set(sample.qids)
    audited = evaluate(store, ["base", "cand"])
    # The same queries with only human labels: every judge label replaced by the truth.
    only_humans = Store(store.path.parent / "humans.duckdb")
    build(only_humans, write)
    ingest_qrels(only_humans, write("truth2.txt", lines), labeller="ana")
    with only_humans.write() as con:
        con.execute("DELETE FROM judgments WHERE source = 'judge'")
    expected = evaluate(only_humans, ["base", "cand"])
    for q in sample.qids:
        i, j = audited.qids.index(q), expected.qids.index(q)
        for m in ("nDCG@10", "R(rel=3)@10", "nR@10"):
            got, want = audited.values[m][:, i], expected.values[m][:, j]
            assert np.allclose(got, want, equal_nan=True), (q, m, got, want)


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
