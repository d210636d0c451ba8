"""Lifting chunk labels to documents: max rule, source of the maximum, provenance, idempotence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_texts import ingest_docs
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, effective_labels_sql, write_judgments
from tests.conftest import CliResult

Writer = Callable[[str, str | bytes], Path]


def test_lift_max_with_provenance(write: Writer, cli: Callable[..., CliResult]) -> None:
    store = Store()
    ingest_docs(
        store,
        write(
            "chunks.jsonl",
            "".join(
                json.dumps(r) + "\n"
                for r in [
                    {"doc_id": "D1#0", "text": "a", "parent_id": "D1"},
                    {"doc_id": "D1#1", "text": "b", "parent_id": "D1"},
                    {"doc_id": "D2#0", "text": "c", "parent_id": "D2"},
                ]
            ),
        ),
    )
    ingest_qrels(store, write("chunks.qrels", "q1 0 D1#0 1\nq1 0 D2#0 2\nq2 0 loose 0\n"))
    write_judgments(
        store,
        [
            Judgment("q1", "D1#1", 3, "judge", "judge-x"),
            Judgment("q1", "D2#0", 0, "judge", "judge-x"),
        ],
    )  # human 2 stays effective

    result = cli("labels", "lift", "--to", "doc")
    assert result.code == 0, result.err
    assert result.out.strip() == (
        "lifted 4 chunk labels to 3 doc-level labels on 2 queries (rule max; 2 human, 1 judge)"
    )
    with store.read() as con:
        lifted = con.execute(
            "SELECT qid, doc_id, grade, source, labeller, provenance FROM judgments "
            "WHERE level = 'doc' ORDER BY qid, doc_id"
        ).fetchall()
        effective = con.execute(
            f"SELECT qid, doc_id, grade FROM ({effective_labels_sql('doc')}) ORDER BY 1, 2"
        ).fetchall()
    assert [row[:5] for row in lifted] == [
        ("q1", "D1", 3, "judge", "lift:max"),
        ("q1", "D2", 2, "human", "lift:max"),
        ("q2", "loose", 0, "human", "lift:max"),
    ]
    provenance = json.loads(lifted[0][5])
    assert provenance["rule"] == "max" and provenance["from_level"] == "chunk"
    assert [(c["chunk"], c["grade"], c["source"]) for c in provenance["chunks"]] == [
        ("D1#0", 1, "human"),
        ("D1#1", 3, "judge"),
    ]
    assert effective == [("q1", "D1", 3), ("q1", "D2", 2), ("q2", "loose", 0)]
    # Lifting again replaces the lifted labels instead of adding more.
    assert cli("labels", "lift", "--to", "doc").code == 0
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM judgments WHERE level = 'doc'").fetchone() == (3,)
