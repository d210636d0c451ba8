"""Helpers for the ingest tests: a digest of the database, to prove a refusal changed nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path


def snapshot(db: Path) -> str:
    """A digest of every row of every table, to prove a failed ingest changed nothing."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        digest = hashlib.sha256()
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables ORDER BY table_name"
            ).fetchall()
        ]
        for table in tables:
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            digest.update(table.encode())
            digest.update(repr(sorted(map(repr, rows))).encode())
        return digest.hexdigest()
    finally:
        con.close()
