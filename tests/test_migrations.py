"""A database written before a migration opens with its data intact: the judge-source migration
(3) turns the old 'llm' source into 'judge' and keeps every label, its id and the id sequence."""

from __future__ import annotations

from pathlib import Path

import duckdb

from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION


def _database_at_version(path: Path, version: int, labels: bool = True) -> None:
    """A database as a judgepool of schema `version` left it, with two labels of the time
    (written as migration 2 left them) when `labels`."""
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
    if not labels:
        con.close()
        return
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


def _run_rows_compression(store: Store) -> str:
    with store.read() as con:
        (found,) = con.execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('run_rows') "
            "WHERE column_name = 'doc_id' AND segment_type <> 'VALIDITY'"
        ).fetchone() or ("none",)
    return str(found)


def test_the_runs_doc_ids_move_to_zstd_with_every_row_in_run_order(tmp_path: Path) -> None:
    """Migration 12: the rows of a database written before it are kept, each run's in (rank,
    qid) order, and their doc ids are stored with zstd from then on."""
    path = tmp_path / "old.duckdb"
    _database_at_version(path, 11, labels=False)
    rows = [
        (key, f"q{q}", f"doc-{key}-{q}-{rank}", 10.0 - rank / 7, rank)
        for key in (2, 1)
        for q in (3, 1, 2)
        for rank in range(1, 40)
    ]
    con = duckdb.connect(str(path))
    con.executemany("INSERT INTO run_rows VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CHECKPOINT")
    con.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    with store.read() as con:
        stored = con.execute("SELECT run_key, qid, doc_id, score, rank FROM run_rows").fetchall()
    assert stored == sorted(rows, key=lambda r: (r[0], r[4], r[1]))
    assert _run_rows_compression(store) == "ZSTD"


def test_an_ingested_run_stores_its_doc_ids_with_zstd(tmp_path: Path) -> None:
    from judgepool.pooling.ingest_runs import ingest_runs

    run = tmp_path / "run.trec"
    run.write_text("".join(f"q1 Q0 d{i} {i + 1} {100 - i} sys\n" for i in range(50)))
    store = Store(tmp_path / "new.duckdb")
    ingest_runs(store, [run])
    assert _run_rows_compression(store) == "ZSTD"


def _schema(store: Store) -> list[tuple[object, ...]]:
    with store.read() as con:
        return con.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_catalog = current_database() "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()


def test_a_new_database_has_the_schema_an_old_one_upgraded_to(tmp_path: Path) -> None:
    """A new database gets every migration in one transaction; one of the first version gets
    them one at a time. Both end with the same tables, columns and versions."""
    new = Store(tmp_path / "new.duckdb")
    with new.write(create=True):
        pass
    _database_at_version(tmp_path / "old.duckdb", 1, labels=False)
    old = Store(tmp_path / "old.duckdb")
    assert old.schema_version() == new.schema_version() == SCHEMA_VERSION
    assert _schema(new) == _schema(old)
    with new.read() as con:
        versions = con.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
    assert versions == [(m.version, m.name) for m in MIGRATIONS]
