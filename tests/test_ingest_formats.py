"""Every documented input format loads, gzip-compressed or not, with ids kept as strings."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgepool.pooling.ingest_labels import ingest_qrels
from judgepool.pooling.ingest_runs import default_run_name, ingest_run
from judgepool.pooling.ingest_texts import ingest_docs, ingest_queries
from judgepool.pooling.io.text import content_hash
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Writer = Callable[[str, str | bytes], Path]


def rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store.read() as con:
        return [tuple(r) for r in con.execute(sql).fetchall()]


def ranking(store: Store, run: str) -> list[tuple[str, str, int]]:
    return [
        (q, d, r)
        for q, d, r in rows(
            store,
            "SELECT qid, doc_id, rank FROM run_rows JOIN runs USING (run_key) "
            f"WHERE name = '{run}' ORDER BY qid, rank",
        )
    ]


URL_IDS = (
    "q:1 Q0 msmarco_v2.1_doc_00_0#3_12 1 3.0 t\n"
    "q:1 Q0 https://example.org/a/b#frag 2 2.0 t\n"
    "q/2 Q0 clueweb22-en0000-00-00000:5 1 1.0 t\n"
)


@pytest.mark.parametrize("separator", [" ", "\t", "   ", " \t "])
def test_trec_run_with_any_whitespace_and_url_like_ids(write: Writer, separator: str) -> None:
    store = Store()
    path = write("urls.trec", URL_IDS.replace(" ", separator))
    done = ingest_run(store, path, name="urls")
    assert (done.rows, done.queries, done.format) == (3, 2, "trec")
    assert ranking(store, "urls") == [
        ("q/2", "clueweb22-en0000-00-00000:5", 1),
        ("q:1", "msmarco_v2.1_doc_00_0#3_12", 1),
        ("q:1", "https://example.org/a/b#frag", 2),
    ]


def test_rank_column_is_ignored_and_ties_break_by_doc_id_descending(write: Writer) -> None:
    # trec_eval sorts by score descending, then by doc id descending (strcmp, byte order).
    run = (
        "q1 Q0 a 1 1.0 t\n"
        "q1 Q0 B 2 1.0 t\n"
        "q1 Q0 b 3 1.0 t\n"
        "q1 Q0 c 4 2.0 t\n"
        "q1 Q0 z 5 0.5 t\n"
        "q1 Q0 10 6 1.0 t\n"
        "q1 Q0 9 7 1.0 t\n"
    )
    store = Store()
    ingest_run(store, write("ties.trec", run), name="ties")
    assert [d for _, d, _ in ranking(store, "ties")] == ["c", "b", "a", "B", "9", "10", "z"]


def test_same_run_in_every_format_gives_the_same_ranking(write: Writer, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    trec = "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.9 t\nq2 Q0 d1 1 -1e3 t\n"
    store = Store()
    ingest_run(store, write("a.trec", trec), name="trec")
    ingest_run(store, write("b.trec.gz", gzip.compress(trec.encode())), name="trecgz")
    lines = [
        {"qid": "q1", "doc_id": "d1", "score": 0.5},
        {"qid": "q1", "docid": "d2", "score": "0.9", "rank": 7},
        {"qid": "q2", "doc_id": "d1", "score": -1000},
    ]
    ingest_run(store, write("c.jsonl", "\n".join(map(json.dumps, lines)) + "\n"), name="jsonl")
    gz = gzip.compress(("\n".join(map(json.dumps, lines)) + "\n").encode())
    ingest_run(store, write("d.jsonl.gz", gz), name="jsonlgz")
    pq.write_table(
        pa.table(
            {"qid": ["q1", "q1", "q2"], "docid": ["d1", "d2", "d1"], "score": [0.5, 0.9, -1e3]}
        ),
        tmp_path / "e.parquet",
    )
    ingest_run(store, tmp_path / "e.parquet", name="parquet")
    # A file with an unhelpful name is recognised from its first line.
    ingest_run(store, write("f.out", trec), name="sniffed")
    expected = ranking(store, "trec")
    assert expected == [("q1", "d2", 1), ("q1", "d1", 2), ("q2", "d1", 1)]
    for name in ("trecgz", "jsonl", "jsonlgz", "parquet", "sniffed"):
        assert ranking(store, name) == expected, name


def test_crlf_bom_and_blank_lines_are_tolerated(write: Writer) -> None:
    store = Store()
    content = "\ufeffq1 Q0 d1 1 2.0 t\r\n\r\nq1 Q0 d2 2 1.0 t\r\n"
    ingest_run(store, write("crlf.trec", content.encode("utf-8")), name="crlf")
    assert [d for _, d, _ in ranking(store, "crlf")] == ["d1", "d2"]


def test_default_run_name_is_the_file_stem() -> None:
    assert default_run_name(Path("runs/splade.trec.gz")) == "splade"
    assert default_run_name(Path("dl19-passage.bm25.top100.trec")) == "dl19-passage.bm25.top100"
    assert default_run_name(Path("bm25")) == "bm25"


def test_reingesting_a_run_replaces_it(write: Writer, cli: Callable[..., CliResult]) -> None:
    first = cli("ingest", "run", write("bm25.trec", "q1 Q0 d1 1 1.0 t\nq1 Q0 d4 2 0.5 u\n"))
    assert first.code == 0 and "run 'bm25' added: 2 rows" in first.out
    second = cli(
        "ingest",
        "run",
        write("other.trec", "q1 Q0 d2 1 1.0 t\nq2 Q0 d3 1 1.0 t\n"),
        "--name",
        "bm25",
    )
    assert second.code == 0 and "run 'bm25' replaced: 2 rows, 2 queries" in second.out
    store = Store()
    assert ranking(store, "bm25") == [("q1", "d2", 1), ("q2", "d3", 1)]
    assert rows(store, "SELECT count(*) FROM run_rows") == [(2,)]


def test_qrels_twice_do_not_duplicate_and_a_changed_grade_replaces(write: Writer) -> None:
    store = Store()
    path = write("qrels.txt", "q1 0 d1 2\nq1 0 d2 -1\nq2 Q0 d3 0\n")
    first = ingest_qrels(store, path)
    assert (first.labels, first.added, first.unchanged) == (3, 3, 0)
    again = ingest_qrels(store, path)
    assert (again.added, again.changed, again.unchanged) == (0, 0, 3)
    path.write_text("q1 0 d1 3\nq1 0 d2 -1\nq2 Q0 d3 0\n")
    fixed = ingest_qrels(store, path)
    assert (fixed.added, fixed.changed, fixed.unchanged) == (1, 1, 2)
    assert rows(store, "SELECT qid, doc_id, grade, labeller FROM judgments ORDER BY 1, 2") == [
        ("q1", "d1", 3, "qrels.txt"),
        ("q1", "d2", -1, "qrels.txt"),
        ("q2", "d3", 0, "qrels.txt"),
    ]
    # The same pairs under another labeller, or at another level, are other labels: the first
    # of them are all added (nothing compared with the others' labels), then compared.
    other = ingest_qrels(store, path, labeller="assessor-2")
    assert (other.added, other.changed, other.unchanged) == (3, 0, 0)
    assert rows(store, "SELECT count(*) FROM judgments") == [(6,)]
    docs = ingest_qrels(store, path, level="doc")
    assert (docs.added, docs.changed, docs.unchanged) == (3, 0, 0)
    again = ingest_qrels(store, path, labeller="assessor-2")
    assert (again.added, again.changed, again.unchanged) == (0, 0, 3)
    assert rows(store, "SELECT count(*) FROM judgments") == [(9,)]


def test_qrels_jsonl_and_doc_level(write: Writer) -> None:
    store = Store()
    path = write(
        "doc.jsonl",
        '{"qid": "q1", "doc_id": "D1", "grade": 3}\n'
        '{"qid": "q1", "docid": "D2", "relevance": "0"}\n',
    )
    done = ingest_qrels(store, path, level="doc")
    assert (done.labels, done.level) == (2, "doc")
    assert rows(store, "SELECT doc_id, grade, level FROM judgments ORDER BY 1") == [
        ("D1", 3, "doc"),
        ("D2", 0, "doc"),
    ]


def test_queries_tsv_and_jsonl(write: Writer) -> None:
    store = Store()
    ingest_queries(store, write("t.tsv", "1\twhat is a\ttab\n2\tsecond query\n"))
    ingest_queries(
        store,
        write("t.jsonl", '{"query_id": "3", "query": "third"}\n{"_id": 4, "text": "fourth"}\n'),
    )
    assert rows(store, "SELECT qid, text FROM queries ORDER BY qid") == [
        ("1", "what is a\ttab"),
        ("2", "second query"),
        ("3", "third"),
        ("4", "fourth"),
    ]


def test_docs_jsonl_tsv_and_header_tsv(write: Writer) -> None:
    store = Store()
    ingest_docs(
        store,
        write(
            "c.jsonl.gz",
            gzip.compress(
                b'{"_id": "c1", "contents": "  Hello\\n world ", "title": "T", "parent_id": "D"}\n'
                b'{"docid": "c2", "body": "", "parent_id": "D"}\n'
            ),
        ),
    )
    ingest_docs(store, write("p.tsv", "p1\tplain passage\twith a tab\n"))
    ingest_docs(store, write("h.tsv", "doc_id\ttext\tparent_id\nh1\theaded\tH\n"))
    assert rows(
        store, "SELECT doc_id, text, title, parent_id, content_hash FROM docs ORDER BY 1"
    ) == [
        ("c1", "  Hello\n world ", "T", "D", content_hash("Hello world")),
        ("c2", None, None, "D", None),
        ("h1", "headed", None, "H", content_hash("headed")),
        ("p1", "plain passage\twith a tab", None, None, content_hash("plain passage with a tab")),
    ]


def test_ingest_cli_prints_what_it_did(write: Writer, cli: Callable[..., CliResult]) -> None:
    result = cli("ingest", "docs", write("d.jsonl", '{"id": "a", "text": "x", "parent_id": "A"}\n'))
    assert result.code == 0
    assert "1 docs (0 replaced, 0 without text, 1 with a parent_id) [jsonl]" in result.out
    result = cli("ingest", "queries", write("q.tsv", "q1\tx\n"))
    assert "1 queries (0 replaced) [tsv]" in result.out
