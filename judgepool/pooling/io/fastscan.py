"""Fast path for TREC runs and qrels: DuckDB's parallel CSV scanner, into a scratch connection.

The fast path accepts only files that the line-exact readers (pooling/io/readers.py) accept with the
same values: one separator character (the first line's space or tab) between columns, no
whitespace or control character inside a field, scores written as plain decimals, grades that
fit 32 bits, no comment line, no (qid, doc_id) pair twice, at least one row. Anything else makes
it give up (`None`), and the caller runs the readers, which either read the file (mixed
whitespace, comments, hex floats) or say exactly which line is wrong.

It runs on a scratch in-memory connection, never on the database: a scan that fails cannot
abort a write transaction, and the database's lock is not held while a file is parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.io.formats import is_gzip
from judgepool.pooling.io.values import DECIMAL, INTEGER, SQL_BAD_ID

if TYPE_CHECKING:
    import duckdb

_RUN = ("qid", "q0", "doc_id", "rank", "score", "tag")
_QRELS = ("qid", "iter", "doc_id", "grade")
_PRINTABLE = bytes(range(0x21, 0x7F)) + b"\n"


def _separator(path: Path) -> str | None:
    """The single separator the first line uses, or None when it mixes or doubles them."""
    import gzip

    opener = gzip.open if is_gzip(path) else open
    try:
        with opener(path, "rb") as fh:
            first = fh.readline().rstrip(b"\r\n")
    except (OSError, EOFError):  # a corrupt stream: the exact reader will say where
        return None
    if b"\t" in first and b" " not in first:
        return "\t"
    if b" " in first and b"\t" not in first and b"  " not in first:
        return " "
    return None


def _plain(path: Path, sep: str) -> bool:
    """Whether an uncompressed file holds only printable ASCII, `sep` and line ends (LF, CRLF).

    Then no field can hold whitespace or a control character and SQL need not look for them (a
    byte scan at memory speed instead of a regex per row). Anything else gets the regex check.
    """
    if is_gzip(path):
        return False
    keep = _PRINTABLE + sep.encode()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 24):
            rest = chunk.translate(None, keep)
            if rest and (rest.strip(b"\r") or chunk.count(b"\r") != chunk.count(b"\r\n")):
                return False
    return True


def _read(
    con: duckdb.DuckDBPyConnection, path: Path, table: str, columns: tuple[str, ...]
) -> bool | None:
    """Every column as text into `table`: None when the file is not one clean separator, else
    whether it is plain (see `_plain`)."""
    import duckdb

    sep = _separator(path)
    if sep is None:
        return None
    spec = ", ".join(f"'{name}': 'VARCHAR'" for name in columns)
    compression = "gzip" if is_gzip(path) else "none"
    try:
        con.execute(
            f"CREATE TEMP TABLE {table} AS SELECT * FROM read_csv($path, "
            f"columns={{{spec}}}, header=false, delim=$sep, quote='', escape='', "
            f"auto_detect=false, strict_mode=true, compression='{compression}')",
            {"path": str(path), "sep": sep},
        )
    except duckdb.Error:
        return None
    return _plain(path, sep)


def _clean(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: tuple[str, ...],
    plain: bool,
    value_check: str,
) -> bool:
    """Whether every row is one the exact reader reads the same way (else drop the table).

    No field may be empty (a doubled separator); unless the file is plain, one regex looks at
    all the fields at once: whitespace or a control character in a field of any column sends
    the file to the exact reader (which is stricter only about ids).
    """
    fields = ", ".join(columns)
    bad = " OR ".join(
        [f"{c} IS NULL" for c in columns]
        + ([] if plain else [f"regexp_matches(concat({fields}), '{SQL_BAD_ID}')"])
        + ["starts_with(qid, '#')", f"NOT ({value_check})"]
    )
    # Duplicates compare 64-bit hashes (cheaper than grouping string pairs): a collision reads
    # as a duplicate, which only sends the file to the exact reader, never loses a row.
    row = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {bad}), "
        f"count(*) - count(DISTINCT hash(qid, doc_id)) FROM {table}"
    ).fetchone()
    if row is None or row[0] == 0 or row[1] > 0 or row[2] > 0:
        con.execute(f"DROP TABLE {table}")
        return False
    return True


def scan_run(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> list[str] | None:
    """Load a TREC run as temp view `table` (qid, doc_id, score DOUBLE); its tags (up to two),
    or None (and no table) when the exact reader must read it."""
    raw = f"{table}_text"
    plain = _read(con, path, raw, _RUN)
    check = f"regexp_full_match(score, '{DECIMAL}')"
    if plain is None or not _clean(con, raw, _RUN, plain, check):
        return None
    tags = [r[0] for r in con.execute(f"SELECT DISTINCT tag FROM {raw} LIMIT 2").fetchall()]
    con.execute(
        f"CREATE TEMP VIEW {table} AS SELECT qid, doc_id, CAST(score AS DOUBLE) AS score FROM {raw}"
    )
    return [str(t) for t in tags]


def scan_qrels(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> bool:
    """Load TREC qrels as temp view `table` (qid, doc_id, grade INTEGER); False (and no table)
    when the exact reader must read them."""
    raw = f"{table}_text"
    plain = _read(con, path, raw, _QRELS)
    check = f"regexp_full_match(grade, '{INTEGER}') AND TRY_CAST(grade AS INTEGER) IS NOT NULL"
    if plain is None or not _clean(con, raw, _QRELS, plain, check):
        return False
    con.execute(
        f"CREATE TEMP VIEW {table} AS "
        f"SELECT qid, doc_id, CAST(grade AS INTEGER) AS grade FROM {raw}"
    )
    return True
