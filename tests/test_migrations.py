"""A database written before a migration opens with its data intact: the judge-source migration
(3) turns the old 'llm' source into 'judge' and keeps every label, its id and the id sequence."""

from __future__ import annotations

from pathlib import Path

import duckdb

from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION


def _database_at_version(path: Path, version: int) -> None:
    """A database as a judgepool of schema `version` left it, with two labels of the time."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER NOT NULL, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL)"
    )
    for migration in MIGRATIONS:
        if migration.version <= version:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                [migration.version, migration.name, utcnow()],
            )
    con.execute(
        "INSERT INTO judgments (qid, doc_id, level, grade, source, labeller, status, created_at) "
        "VALUES ('q1', 'd1', 'chunk', 2, 'human', 'qrels.txt', 'ok', now()), "
        "('q1', 'd2', 'chunk', 3, 'llm', 'openai/gpt-4o-mini@relevance-v1', 'ok', now())"
    )
    con.close()


def test_the_judge_source_migration_keeps_every_label(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _database_at_version(path, 2)
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION  # a read upgraded it
    with store.read() as con:
        rows = con.execute("SELECT id, doc_id, source FROM judgments ORDER BY id").fetchall()
    assert rows == [(1, "d1", "human"), (2, "d2", "judge")]
    write_judgments(store, [Judgment("q1", "d3", 1, "judge", "offline:x")])
    with store.read() as con:
        assert con.execute("SELECT max(id) FROM judgments").fetchone() == (3,)


def test_calibration_and_canary_labels_never_count(tmp_path: Path) -> None:
    """Only purpose 'label' can be effective, exported or fill a hole (migration 4)."""
    from judgepool.pooling.export import export_labels
    from judgepool.pooling.store.judgments import effective_labels_sql

    store = Store(tmp_path / "db.duckdb")
    with store.write(create=True):
        pass
    write_judgments(
        store,
        [
            Judgment("q1", "d1", 1, "human", "qrels.txt"),
            Judgment("q1", "d1", 3, "judge", "j", purpose="calibration"),
            Judgment("q1", "d2", 3, "judge", "j", purpose="canary"),
            Judgment("q1", "d3", 2, "judge", "j"),
        ],
    )
    with store.read() as con:
        rows = con.execute(
            f"SELECT doc_id, grade FROM ({effective_labels_sql('chunk')}) ORDER BY doc_id"
        ).fetchall()
    assert rows == [("d1", 1), ("d3", 2)]
    assert export_labels(store, source="judge") == b"q1 0 d3 2\n"
    with store.read() as con:
        purposes = con.execute("SELECT purpose FROM judgments ORDER BY id").fetchall()
    assert [p for (p,) in purposes] == ["label", "calibration", "canary", "label"]
