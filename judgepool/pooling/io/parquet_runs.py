"""Parquet runs: columns checked by type, not converted, and every bad value named by its row.

A Parquet run has columns `qid`, `doc_id` (or `docid`) and `score`. Ids must be strings, or
integers (read as their decimal form: 1101 -> '1101'); a float, list, bool or any other column
type is refused, since casting it would make ids that match nothing ('1.0', '[q1]'). Scores must
be numbers (integers, floats, decimals); a bool or text column is refused. Rows are numbered
from 1 in file order.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import InputError, Param, remedy
from judgepool.pooling.io.readers import no_entries
from judgepool.pooling.io.values import SQL_BAD_ID, check_id

if TYPE_CHECKING:
    import duckdb

_FORMAT = Param("format", "parquet")  # to say how to read a file that is one

_INTEGERS = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
}


def _id_type(kind: str) -> bool:
    return kind in _INTEGERS or kind == "VARCHAR"


def _score_type(kind: str) -> bool:
    return kind in _INTEGERS or kind in ("FLOAT", "DOUBLE") or kind.startswith("DECIMAL(")


def _columns(con: duckdb.DuckDBPyConnection, path: Path) -> dict[str, str]:
    import duckdb

    try:
        described = con.execute("DESCRIBE SELECT * FROM read_parquet($p)", {"p": str(path)})
        return {str(r[0]): str(r[1]) for r in described.fetchall()}
    except duckdb.Error as err:
        raise InputError(
            path,
            f"not a readable Parquet file: {err}",
            hint=remedy("check that the file is complete, or give its format ({})", _FORMAT),
        ) from None


def _refuse_type(
    con: duckdb.DuckDBPyConnection, path: Path, column: str, kind: str, what: str
) -> InputError:
    first = con.execute(
        f'SELECT file_row_number + 1, "{column}" FROM read_parquet($p, file_row_number=true) '
        "ORDER BY 1 LIMIT 1",
        {"p": str(path)},
    ).fetchone()
    example = f" (row {first[0]}: {first[1]!r})" if first is not None else ""
    if what == "ids":
        problem = f"column {column!r} holds {kind} values{example}: ids must be strings"
        hint = f"write {column!r} as strings (an integer column is read as its decimal form)"
        return InputError(path, problem, hint=hint)
    return InputError(
        path,
        f"column {column!r} holds {kind} values{example}: scores must be numbers",
        hint=f"write {column!r} as numbers (integers or floats)",
    )


def _first_bad_row(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> None:
    bad = con.execute(
        f"SELECT row_no, qid, doc_id, score FROM {table} WHERE qid IS NULL OR doc_id IS NULL "
        f"OR qid = '' OR doc_id = '' OR regexp_matches(qid, '{SQL_BAD_ID}') "
        f"OR regexp_matches(doc_id, '{SQL_BAD_ID}') OR score IS NULL OR isnan(score) "
        "ORDER BY row_no LIMIT 1"
    ).fetchone()
    if bad is None:
        return
    row, qid, doc_id, score = bad
    for what, value in (("qid", qid), ("doc id", doc_id)):
        if value is None:
            raise InputError(
                path, f"row {row}: the {what} is null", hint=f"give every row its {what}"
            )
        try:
            check_id(path, row, what, value)
        except InputError as err:
            raise InputError(path, f"row {row}: {err.problem}", hint=err.remedy) from None
    raise InputError(
        path,
        f"row {row}: score {score!r} cannot be ranked",
        hint="give every row a real number as its score",
    )


def load_parquet_run(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> None:
    """Check the Parquet run at `path` and load it into temp `table` (qid, doc_id, score)."""
    names = _columns(con, path)
    doc_col = next((c for c in ("doc_id", "docid") if c in names), None)
    present = {"qid": "qid" in names, "doc_id": doc_col is not None, "score": "score" in names}
    missing = [column for column, ok in present.items() if not ok]
    if missing or doc_col is None:
        raise InputError(
            path,
            f"missing column(s) {', '.join(missing)}; found {', '.join(names)}",
            hint="a Parquet run needs columns qid, doc_id (or docid) and score",
        )
    for column, allowed, what in (
        ("qid", _id_type, "ids"),
        (doc_col, _id_type, "ids"),
        ("score", _score_type, "scores"),
    ):
        if not allowed(names[column]):
            raise _refuse_type(con, path, column, names[column], what)
    con.execute(
        f"CREATE TEMP TABLE {table}_rows AS SELECT file_row_number + 1 AS row_no, "
        f"CAST(qid AS VARCHAR) AS qid, CAST({doc_col} AS VARCHAR) AS doc_id, "
        "CAST(score AS DOUBLE) AS score FROM read_parquet($p, file_row_number=true)",
        {"p": str(path)},
    )
    if con.execute(f"SELECT count(*) FROM {table}_rows").fetchone() == (0,):
        raise no_entries(path, "no rows")
    _first_bad_row(con, path, f"{table}_rows")
    dup = con.execute(
        f"SELECT qid, doc_id, list(row_no ORDER BY row_no) FROM {table}_rows "
        "GROUP BY qid, doc_id HAVING count(*) > 1 ORDER BY min(row_no) LIMIT 1"
    ).fetchone()
    if dup is not None:
        first, second = dup[2][0], dup[2][1]
        raise InputError(
            path,
            f"row {second}: doc {dup[1]!r} appears twice for query {dup[0]!r} (first: row {first})",
            hint="a ranking lists each (query, doc) pair once",
        )
    con.execute(f"CREATE TEMP TABLE {table} AS SELECT qid, doc_id, score FROM {table}_rows")
    con.execute(f"DROP TABLE {table}_rows")
