"""Fast path for whitespace-column files (TREC runs and qrels): DuckDB's parallel CSV scanner.

The fast path accepts only files that the line-exact readers (pooling/readers.py) would accept
with the same values: one separator character (a space or a tab) between columns, no empty
fields, no whitespace of any kind inside ids, no NaN scores. Anything else makes it give up
(`None`), and the caller falls back to the readers, which either load the file tolerantly or say
exactly which line is wrong. The fast path is an optimisation only; the readers define validity.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.formats import is_gzip

if TYPE_CHECKING:
    import duckdb

# Every character Python's str.split() / str.isspace() treats as whitespace; RE2's \s is ASCII only.
PY_WHITESPACE = (
    r"[\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
)


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


def scan_columns(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    table: str,
    columns: dict[str, str],
    keep: dict[str, str],
    id_columns: tuple[str, ...],
    float_columns: tuple[str, ...] = (),
) -> bool:
    """Load `path` into temp table `table` with the `keep` expressions; False if it cannot.

    `columns` names and types every column of the file; `keep` maps output column -> SQL
    expression over them (it must yield `qid` and `doc_id`). Returns False (and leaves no table
    behind) whenever the file is not in the simple shape this path handles or holds a (qid,
    doc_id) pair twice, so the caller can use the exact readers instead.
    """
    import duckdb

    sep = _separator(path)
    if sep is None:
        return False
    spec = ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items())
    select = ", ".join(f"{expr} AS {name}" for name, expr in keep.items())
    compression = "gzip" if is_gzip(path) else "none"
    try:
        con.execute(
            f"CREATE TEMP TABLE {table} AS SELECT {select} FROM read_csv($path, "
            f"columns={{{spec}}}, header=false, delim=$sep, quote='', escape='', "
            f"auto_detect=false, strict_mode=true, compression='{compression}')",
            {"path": str(path), "sep": sep},
        )
    except duckdb.Error:
        return False
    bad_ids = " OR ".join(
        f"{c} IS NULL OR regexp_matches({c}, '{PY_WHITESPACE}')" for c in id_columns
    )
    others = [c for c in keep if c not in id_columns]
    nulls = " OR ".join(f"{c} IS NULL" for c in others) or "false"
    nans = " OR ".join(f"isnan({c})" for c in float_columns) or "false"
    # Duplicates compare 64-bit hashes (cheaper than grouping string pairs): a collision reads
    # as a duplicate, which only sends the file to the exact reader, never loses a row.
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE {bad_ids} OR {nulls} OR {nans}), "
        f"count(*) - count(DISTINCT hash(qid, doc_id)) FROM {table}"
    ).fetchone()
    if row is None or row[0] > 0 or row[1] > 0:
        con.execute(f"DROP TABLE {table}")
        return False
    return True
