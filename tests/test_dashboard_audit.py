"""Audit: label filters, a pair with provenance, the seeded sample, overrides (pooling.audit.browse,
pooling.audit.overrides) and the Audit page (AppTest): plain-text passages, the override writing a
human label that becomes effective everywhere, agreement figures and sample progress."""

from __future__ import annotations

from typing import Any

import pytest

from judgepool.errors import UsageError
from judgepool.pooling.audit.browse import (
    LabelFilter,
    audit_sample,
    human_labelled,
    list_labels,
    pair_detail,
)
from judgepool.pooling.audit.overrides import override_label
from judgepool.pooling.export import export_labels
from judgepool.pooling.pool import pool_summary
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import JUDGE, TRICKY_PASSAGE, doc, new_app, open_page, plain, texts_of


def pairs(listing: Any) -> list[tuple[str, str]]:
    return [(r.qid, r.doc_id) for r in listing.rows]


def test_label_filters(store: Store) -> None:
    everything = list_labels(store, LabelFilter())
    assert everything.total == 60 + 31  # qrels, plus 30 ok judge labels and one unparsed
    unparsed = list_labels(store, LabelFilter(statuses=("unparsed",)))
    assert pairs(unparsed) == [("q1", "q1-d11")] and unparsed.rows[0].effective is False
    # Labels of pairs in weak's top 10 (d05-d14): 5 human + d10 judge per query + the unparsed.
    assert list_labels(store, LabelFilter(runs=("weak",))).total == 6 * 6 + 1
    judge_q2 = list_labels(store, LabelFilter(qids=("q2",), sources=("judge",), labellers=(JUDGE,)))
    assert sorted(pairs(judge_q2)) == [("q2", doc("q2", n)) for n in (0, 1, 2, 3, 10)]
    # Only the judge's d10 label is effective; on d00-d03 the human label wins.
    assert {r.doc_id for r in judge_q2.rows if r.effective} == {"q2-d10"}
    grade3 = list_labels(store, LabelFilter(grades=(3,), sources=("human",)))
    assert grade3.total == 12 and len(list_labels(store, LabelFilter(), limit=5).rows) == 5
    assert list_labels(store, LabelFilter(level="doc")).total == 0
    with pytest.raises(UsageError, match="unknown run"):
        list_labels(store, LabelFilter(runs=("nope",)))


def test_pair_detail_has_texts_ranks_and_every_label(store: Store) -> None:
    detail = pair_detail(store, "q1", "q1-d00")
    assert detail.query == "question q1?" and detail.passages == [("q1-d00", TRICKY_PASSAGE)]
    assert detail.ranks == [("cand", 1), ("base", 10)]
    assert [(x.source, x.grade) for x in detail.labels] == [("judge", 3), ("human", 3)]
    judge, human = detail.labels
    assert detail.effective_id == human.id
    assert judge.raw_output is not None and judge.raw_output.endswith("Final score: 3")
    assert judge.provenance is not None and judge.provenance["cache_key"] == "k-q1-0"
    assert (judge.tokens_in, judge.tokens_out, judge.latency_s) == (412, 19, 0.84)


def test_audit_sample_is_stratified_seeded_and_stable(store: Store) -> None:
    sample = audit_sample(store, per_grade=4, seed=3)
    # Judge grades: 3 on d00 and d03 (12 pairs), 2 on d01, d02 and d10 (18 pairs).
    assert sorted(s.judge_grade for s in sample) == [2] * 4 + [3] * 4
    assert audit_sample(store, per_grade=4, seed=3) == sample
    assert audit_sample(store, per_grade=4, seed=4) != sample
    assert len(audit_sample(store, per_grade=100, seed=3)) == 30
    # A human labelling a sampled pair changes progress, not the sample.
    first = sample[0]
    before = human_labelled(store, [(s.qid, s.doc_id) for s in sample])
    override_label(store, first.qid, first.doc_id, 1, "ana")
    after = human_labelled(store, [(s.qid, s.doc_id) for s in sample])
    assert after - before <= {(first.qid, first.doc_id)} and (first.qid, first.doc_id) in after
    assert audit_sample(store, per_grade=4, seed=3) == sample
    with pytest.raises(UsageError):
        audit_sample(store, per_grade=0, seed=1)


def test_an_override_becomes_the_effective_label_everywhere(store: Store) -> None:
    assert [r.holes for r in pool_summary(store).runs] == [0, 0, 24]
    done = override_label(store, "q1", "q1-d12", 1, "ana", "  mentions q1 in passing ")
    assert done.labeller == "override:ana" and done.note == "mentions q1 in passing"
    assert done.replaced is None
    assert [r.holes for r in pool_summary(store).runs] == [0, 0, 23]
    again = override_label(store, "q1", "q1-d12", 0, "bo")
    assert again.replaced is not None and again.replaced["labeller"] == "override:ana"
    assert "q1 0 q1-d12 0" in export_labels(store).decode()
    detail = pair_detail(store, "q1", "q1-d12")
    newest = detail.labels[0]
    assert detail.effective_id == newest.id and newest.source == "human"
    assert newest.provenance is not None and newest.provenance["replaced"]["grade"] == 1


@pytest.mark.parametrize(
    ("qid", "doc_id", "grade", "user", "problem"),
    [
        ("q1", "q1-d12", 4, "ana", "grade 4 is not one of"),
        ("q1", "q1-d12", 2, "two words", "has whitespace"),
        ("q1", "q1-d12", 2, "", "is empty"),
        ("q1", "q1-d99", 2, "ana", "no run ranks and no label names"),
        ("q9", "q1-d12", 2, "ana", "no run ranks and no label names"),
    ],
)
def test_overrides_that_cannot_be_right_are_refused(
    store: Store, qid: str, doc_id: str, grade: int, user: str, problem: str
) -> None:
    with pytest.raises(UsageError, match=problem):
        override_label(store, qid, doc_id, grade, user)


@pytest.mark.slow
def test_page_shows_the_passage_as_plain_text_with_provenance(store: Store) -> None:
    at = open_page("audit", tab="Browse & override")
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="audit_pair").set_value(("q1", "q1-d00")).run()
    assert not at.exception
    shown = texts_of(at, "text")
    assert "question q1?" in shown and TRICKY_PASSAGE in shown
    # Data never reaches an element that renders Markdown or HTML.
    markdown = texts_of(at, "markdown") + texts_of(at, "caption") + texts_of(at, "subheader")
    assert not any("<b>not html</b>" in m or "**bold?**" in m for m in markdown)
    codes = texts_of(at, "code")
    assert "Reasoning: the passage answers part of it.\nFinal score: 3" in codes
    assert any(
        '"cache_key": "k-q1-0"' in j.value or j.value.get("cache_key") == "k-q1-0" for j in at.json
    )
    titles = [plain(e.label) for e in at.expander]
    assert any(
        t.startswith("EFFECTIVE · #") and "human trec-assessors: grade 3" in t for t in titles
    )


@pytest.mark.slow
def test_page_override_writes_a_human_label_that_becomes_effective(store: Store) -> None:
    at = open_page("audit", tab="Browse & override")
    at.selectbox(key="audit_pair").set_value(("q2", "q2-d10")).run()
    at.radio(key="override_grade").set_value(0)
    at.text_area(key="override_note").input("off topic: about q3")
    at.text_input(key="override_user").input("tester")
    at.button(key="override_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (saved,) = texts_of(at, "success")
    assert "it is now the effective label everywhere" in plain(saved)
    listing = list_labels(store, LabelFilter(qids=("q2",), sources=("human",)))
    newest = listing.rows[0]
    assert (newest.doc_id, newest.grade, newest.labeller, newest.note, newest.effective) == (
        "q2-d10",
        0,
        "override:tester",
        "off topic: about q3",
        True,
    )
    assert "q2 0 q2-d10 0" in export_labels(store).decode()
    # The redrawn pair view shows the override as the effective label, and agreement now
    # includes this pair: the judge said 2 where the human says 0 (lenient).
    titles = [plain(e.label) for e in at.expander]
    assert any(t.startswith("EFFECTIVE · #") and "override:tester: grade 0" in t for t in titles)
    at.session_state["audit_tabs"] = "Agreement & calibration"
    metrics = {m.label: m.value for m in at.run().metric}
    assert metrics["Pairs"] == "25" and metrics["Lenient: judge ≥ 2, human < 2"] == "1 (100.0%)"


@pytest.mark.slow
def test_page_refuses_an_override_without_a_grade(store: Store) -> None:
    at = open_page("audit", tab="Browse & override")
    at.selectbox(key="audit_pair").set_value(("q2", "q2-d10")).run()
    at.button(key="override_submit").click().run()
    assert not at.exception
    assert any("grade -1 is not one of" in plain(e) for e in texts_of(at, "error"))
    assert list_labels(store, LabelFilter(labellers=("override:tester",))).total == 0


@pytest.mark.slow
def test_page_agreement_and_sample_progress(store: Store) -> None:
    at = open_page("audit", tab="Agreement & calibration")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Pairs"] == "24" and metrics["Exact agreement"] == "0.500"
    assert metrics["Cohen's κ (0-3)"] == "0.000" and metrics["Cohen's κ (grade ≥ 2)"] == "–"
    at.session_state["audit_tabs"] = "Browse & override"
    at.run()
    at.number_input(key="audit_per_grade").set_value(2)
    at.number_input(key="audit_seed").set_value(5)
    at.button(key="audit_draw").click().run()
    sample = at.session_state["audit_sample"]
    # Seed 5 draws two grade-3 pairs (d00, d03: humans labelled them already) and two grade-2
    # pairs (d10: no human label yet), shuffled.
    assert sample == [
        ("q6", "q6-d03", 3),
        ("q6", "q6-d00", 3),
        ("q4", "q4-d10", 2),
        ("q3", "q3-d10", 2),
    ]
    assert at.get("progress")[0].proto.text == "2 of 4 sampled pairs have a human label"
    at.button(key="audit_next").click().run()
    assert at.selectbox(key="audit_pair").value == ("q4", "q4-d10")
    override_label(store, "q4", "q4-d10", 2, "ana")
    at.run()
    assert at.get("progress")[0].proto.text == "3 of 4 sampled pairs have a human label"
    at.button(key="audit_next").click().run()
    assert at.selectbox(key="audit_pair").value == ("q3", "q3-d10")


def test_a_link_opens_a_pair(store: Store) -> None:
    at = new_app()
    at.run()
    at.query_params.update({"qid": "q1", "doc_id": "q1-d11"})
    at.switch_page("dashboard/audit.py").run()
    assert not at.exception
    assert at.selectbox(key="audit_pair").value == ("q1", "q1-d11")
    assert "I cannot decide <script>alert(1)</script>" in texts_of(at, "code")
