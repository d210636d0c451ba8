"""Helpers for the ingest tests: a small database to refuse inputs into, and a digest of the
database, to prove a refusal changed nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fixtures_databases import Prebuilt

GOOD_RUN = "q1 Q0 d1 1 2.0 good\nq1 Q0 d2 2 1.0 good\nq2 Q0 d3 1 5.0 good\n"


def small_database(
    cli: Callable[..., CliResult], write: Callable[[str, str | bytes], Path], prebuilt: Prebuilt
) -> Path:
    """A database holding one run 'good', qrels, queries and docs (built once per session)."""

    def build() -> None:
        assert cli("ingest", "run", write("good.trec", GOOD_RUN)).code == 0
        assert cli("ingest", "qrels", write("good.qrels", "q1 0 d1 2\n")).code == 0
        assert cli("ingest", "queries", write("topics.tsv", "q1\tfirst\nq2\tsecond\n")).code == 0
        assert (
            cli("ingest", "docs", write("docs.jsonl", '{"doc_id": "d1", "text": "x"}\n')).code == 0
        )

    prebuilt(build)
    return Path("test.duckdb").resolve()


def snapshot(db: Path) -> str:
    """A digest of every row of every table, to prove a failed ingest changed nothing (read
    through the store's own open path: a connection of its own costs ~30 ms, six times more)."""
    with Store(db).read() as con:
        digest = hashlib.sha256()
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_catalog = current_database() ORDER BY table_name"
            ).fetchall()
        ]
        for table in tables:
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            digest.update(table.encode())
            digest.update(repr(sorted(map(repr, rows))).encode())
        return digest.hexdigest()
