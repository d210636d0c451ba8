"""`judgepool export qrels` and pooling.export: which labels, exact bytes, provenance, atomicity."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.errors import UsageError
from judgepool.pooling.audit.overrides import override_label
from judgepool.pooling.export import JUDGMENT_FIELDS, export_labels
from judgepool.pooling.io.outfile import write_atomic
from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from tests.conftest import CliResult
from tests.dashboard_db import JUDGE, QIDS, doc

Writer = Callable[[str, str | bytes], Path]
Cli = Callable[..., CliResult]


def lines_of(payload: bytes) -> list[str]:
    return payload.decode("utf-8").splitlines()


def test_effective_qrels_are_human_labels_plus_judge_labels_of_holes(store: Store) -> None:
    lines = lines_of(export_labels(store, source="effective"))
    # 10 human labels per query, plus the judge's d10; the judge's d00-d03 lose to the humans.
    assert len(lines) == 6 * 11
    assert lines[:3] == ["q1 0 q1-d00 3", "q1 0 q1-d01 3", "q1 0 q1-d02 2"]
    assert "q1 0 q1-d10 2" in lines
    assert "q1 0 q1-d11" not in "\n".join(lines)  # unparsed judge answer: still a hole
    assert lines == sorted(lines, key=lambda x: (x.split()[0], x.split()[2]))


def test_human_and_judge_exports(store: Store) -> None:
    human = lines_of(export_labels(store, source="human"))
    assert len(human) == 60 and all(not x.split()[2].endswith(("d10", "d11")) for x in human)
    judge = lines_of(export_labels(store, source="judge"))
    assert len(judge) == 6 * 5  # d00-d03 and d10 of each query; the unparsed answer is not ok
    assert judge[:5] == [
        "q1 0 q1-d00 3",
        "q1 0 q1-d01 2",
        "q1 0 q1-d02 2",
        "q1 0 q1-d03 3",
        "q1 0 q1-d10 2",
    ]
    assert export_labels(store, source="judge", labeller="someone-else") == b""
    assert export_labels(store, source="effective", level="doc") == b""


def test_an_override_is_exported_as_the_effective_and_as_a_human_label(store: Store) -> None:
    override_label(store, "q2", doc("q2", 10), 0, "ana", "not about q2 at all")
    assert "q2 0 q2-d10 0" in lines_of(export_labels(store, source="effective"))
    assert "q2 0 q2-d10 0" in lines_of(export_labels(store, source="human"))
    assert "q2 0 q2-d10 2" in lines_of(export_labels(store, source="judge"))


def test_jsonl_has_every_field_and_the_provenance(store: Store) -> None:
    records = [json.loads(x) for x in lines_of(export_labels(store, source="judge", fmt="jsonl"))]
    assert len(records) == 30
    first = records[0]
    assert list(first) == list(JUDGMENT_FIELDS)
    assert (first["qid"], first["doc_id"], first["grade"], first["source"]) == (
        "q1",
        "q1-d00",
        3,
        "judge",
    )
    assert first["labeller"] == JUDGE and first["status"] == "ok" and first["level"] == "chunk"
    assert first["raw_output"].endswith("Final score: 3")
    assert (first["tokens_in"], first["tokens_out"], first["latency_s"]) == (412, 19, 0.84)
    assert first["provenance"]["model"] == "openai/gpt-4o-mini"
    assert first["provenance"]["prompt"] == {
        "name": "relevance",
        "version": "v1",
        "sha256": "3f2a9c",
    }
    assert isinstance(first["id"], int) and len(first["created_at"]) >= 19
    # The TREC export of the same labels lists the same pairs, in the same order.
    trec = lines_of(export_labels(store, source="judge"))
    assert [f"{r['qid']} 0 {r['doc_id']} {r['grade']}" for r in records] == trec


def test_text_is_utf8_and_ids_with_odd_characters_survive(write: Writer) -> None:
    store = Store()
    with store.write(create=True):
        pass  # an empty judgepool database (as an ingest would make it)
    write_judgments(
        store,
        [
            Judgment("q:1", "https://ex.org/a#b", 2, "human", "h"),
            Judgment("q:1", "msmarco_v2.1_doc_0#3", 1, "judge", "j", note="épée ✓"),
        ],
    )
    assert lines_of(export_labels(store)) == [
        "q:1 0 https://ex.org/a#b 2",
        "q:1 0 msmarco_v2.1_doc_0#3 1",
    ]
    record = json.loads(lines_of(export_labels(store, fmt="jsonl"))[1])
    assert record["note"] == "épée ✓"


def test_unknown_source_or_format_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="unknown label source"):
        export_labels(store, source="both")
    with pytest.raises(UsageError, match="unknown export format"):
        export_labels(store, fmt="csv")


def test_cli_writes_stdout_and_files_with_the_same_bytes(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    expected = export_labels(store, source="effective", fmt="trec")
    out = cli("export", "qrels")
    assert out.code == 0, out.err
    assert out.out.encode("utf-8") == expected
    target = tmp_path / "out" / "qrels.txt"
    target.parent.mkdir()
    done = cli("export", "qrels", "--source", "judge", "--format", "jsonl", "-o", target)
    assert done.code == 0, done.err
    assert target.read_bytes() == export_labels(store, source="judge", fmt="jsonl")
    assert "30 judge chunk-level labels [jsonl]" in done.err
    assert os.listdir(target.parent) == ["qrels.txt"]  # no temporary file left behind
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_cli_judge_and_level_options(store: Store, cli: Cli) -> None:
    out = cli("export", "qrels", "--source", "judge", "--judge", JUDGE)
    assert out.code == 0 and len(out.out.splitlines()) == 30
    out = cli("export", "qrels", "--level", "doc")  # nothing there: refused, with the reason
    assert out.code == 2 and out.out == "" and "no effective doc-level labels" in out.err
    bad = cli("export", "qrels", "-o", "missing-folder/q.txt")
    assert bad.code == 2 and "folder missing-folder does not exist" in bad.err


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "q.txt"
    target.write_text("old\n")
    target.chmod(0o600)
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["q.txt"]


def test_every_query_is_exported(store: Store) -> None:
    qids = {x.split()[0] for x in lines_of(export_labels(store))}
    assert qids == set(QIDS)
