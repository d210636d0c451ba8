"""Small SQL helpers: single-row results without `assert` (it vanishes under python -O), and
Arrow tables exposed to a query for the length of a block."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from judgepool.errors import DatabaseError

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa


def one(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> tuple[Any, ...]:
    """The single row a query must return (an aggregate, a count)."""
    row = con.execute(sql, params).fetchone() if params is not None else con.execute(sql).fetchone()
    if row is None:
        raise DatabaseError(f"query returned no row: {sql.strip()[:80]}")
    return tuple(row)


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
    """The first column of the single row a query must return."""
    return one(con, sql, params)[0]


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> Iterator[str]:
    """Expose an Arrow table to SQL as `name` for the length of the block (then unregister)."""
    import duckdb

    con.register(name, table)
    try:
        yield name
    except BaseException:
        # After a failed statement (a full disk) the transaction is aborted and unregistering
        # fails too: the first error is the one to report.
        with contextlib.suppress(duckdb.Error):
            con.unregister(name)
        raise
    con.unregister(name)


_scratch_lock = threading.Lock()
_scratch_db: list[duckdb.DuckDBPyConnection] = []  # the process's in-memory DuckDB, once made


@contextmanager
def scratch() -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB connection to parse and check a file on, away from the database:
    nothing done here holds the database's lock or can abort its transaction.

    Each call gets its own connection (a cursor) to one in-memory database made once per
    process: starting DuckDB costs 15-30 ms, a cursor a fraction of a millisecond. What a caller
    registers or makes TEMP is its connection's alone and goes with it. It is not the instance
    the store attaches database files to (store/connection.py): its settings below hold for a
    whole instance, and the database's writes keep their insertion order."""
    import duckdb

    with _scratch_lock:
        if not _scratch_db:
            engine = duckdb.connect(":memory:")
            # Arrow tables made here are copied into the database: string views make that half
            # as long. Rows are checked by aggregates and ordered explicitly where order matters.
            engine.execute("SET produce_arrow_string_view = true")
            engine.execute("SET preserve_insertion_order = false")
            _scratch_db.append(engine)
        con = _scratch_db[0].cursor()
    try:
        yield con
    finally:
        con.close()
