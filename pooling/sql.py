"""Small helpers for reading query results without `assert` (which vanishes under python -O)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pooling.errors import DatabaseError

if TYPE_CHECKING:
    import duckdb


def one(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> tuple[Any, ...]:
    """The single row a query must return (an aggregate, a count)."""
    row = con.execute(sql, params).fetchone() if params is not None else con.execute(sql).fetchone()
    if row is None:
        raise DatabaseError(f"query returned no row: {sql.strip()[:80]}")
    return tuple(row)


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
    """The first column of the single row a query must return."""
    return one(con, sql, params)[0]
