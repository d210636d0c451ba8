"""Fast path for TREC runs and qrels: a byte scan, then Arrow's CSV reader and compute kernels.

The fast path accepts only files that the line-exact readers (pooling/io/readers.py) accept with the
same values: one separator character (the first line's space or tab) between columns, no
whitespace or control character inside a field, scores that Arrow reads as doubles, grades that
fit 32 bits, no comment line, at least one row. Anything else makes it give up (`None`), and the
caller runs the readers, which either read the file (mixed whitespace, comments, hex floats) or
say exactly which line is wrong. Pairs listed twice are the caller's to find: a run's by the
ranking, which hashes every pair (pooling/run_order.py), so they cost nothing more here.

Every check runs over the whole file at once, never per row in Python:
- the bytes: one `translate` tells a file of printable ASCII (then no field can hold whitespace
  or a control character), two counts a lone carriage return (which Arrow would take for a line
  end and trec_eval for a separator), and one RE2 pass, on a second thread while Arrow reads the
  file, an empty field (a separator doubled, or at a line's start or end) or a comment line;
- the fields: a file that is not plain ASCII has every field matched against the class of
  characters an id may not hold (one RE2 pass per column); grades are matched against their
  syntax, then cast by Arrow; scores are read as doubles by Arrow's CSV reader, which rounds a
  decimal as C's strtod does (correctly, to the nearest double; beyond the double range to
  infinity) and reads `inf` as strtod does; a score it cannot read, NaN or a word it takes for
  null (`NA`) sends the file to the exact reader.
"""

from __future__ import annotations

import itertools
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.pooling.io.formats import GZIP_MAGIC
from judgepool.pooling.io.values import INTEGER, SQL_BAD_ID

if TYPE_CHECKING:
    import pyarrow as pa

_RUN = ("qid", "q0", "doc_id", "rank", "score", "tag")
_QRELS = ("qid", "iter", "doc_id", "grade")
_PRINTABLE = bytes(range(0x21, 0x7F)) + b"\n"
_BOM = b"\xef\xbb\xbf"


def _gunzip(raw: bytes) -> bytes | None:
    """Every member of a gzip stream, decompressed in whole-buffer calls (zlib lets other threads
    run meanwhile, which `gzip.open(...).read()` in small pieces barely does), or None when the
    stream is cut short or corrupt. Zero bytes after the last member are padding, as for gzip."""
    parts = []
    while raw:
        member = zlib.decompressobj(wbits=31)
        try:
            parts.append(member.decompress(raw))
        except zlib.error:
            return None
        if not member.eof:
            return None
        raw = member.unused_data
        if not raw.strip(b"\0"):
            break
    return b"".join(parts)


def _bytes(path: Path) -> bytes | None:
    """The file's bytes (decompressed when it is gzip), or None when they cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError:  # the exact reader will say what
        return None
    return _gunzip(raw) if raw.startswith(GZIP_MAGIC) else raw


def _piece(path: Path, start: int, end: int) -> bytes | None:
    """Bytes `start` to `end` of a file that is not compressed, or None when they cannot be
    read whole."""
    try:
        with path.open("rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
    except OSError:
        return None
    return data if len(data) == end - start else None


def query_pieces(path: Path, count: int, reach: int = 1 << 20) -> list[tuple[int, int]] | None:
    """The byte ranges of `count` pieces of about equal size of the run at `path` (a file that
    is not compressed), cut where a line of another query starts: a piece is then parsed and
    ranked on its own (pooling/ingest_runs.py). None when the file is compressed or its first
    line has no single separator, when no new query starts within `reach` bytes of a cut, or
    when a piece would start with a byte order mark, a separator or a comment (which only the
    whole file's reading judges right). The pieces' queries must still be checked to be
    disjoint: a query may come back later in a file."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(reach)
            sep = None if head.startswith(GZIP_MAGIC) else _separator(head)
            if sep is None:
                return None
            cuts = [0]
            for i in range(1, count):
                fh.seek(size * i // count)
                cut = _next_query(fh.read(reach), sep)
                if cut is None:
                    return None
                cut += size * i // count
                if cut <= cuts[-1] or cut >= size:
                    return None
                cuts.append(cut)
    except OSError:
        return None
    cuts.append(size)
    return list(itertools.pairwise(cuts))


def _next_query(window: bytes, sep: bytes) -> int | None:
    """Where in `window` (bytes from the middle of a run) the first line of a query starts that
    is not the query of its first whole line; None when it is not in the window, or when that
    line starts with a byte order mark, `sep` or `#`."""
    start = window.find(b"\n") + 1
    end = window.find(sep, start)
    if start == 0 or end < 0 or b"\n" in window[start:end]:
        return None
    qid = window[start : end + 1]  # the query id and its separator
    at = start
    while window.startswith(qid, at):
        line_end = window.find(b"\n", at)
        if line_end < 0:
            return None
        at = line_end + 1
    if window[at : at + 3] == _BOM or window[at : at + 1] in (sep, b"#"):
        return None
    # the new query's line uses the file's one separator, as the first line does
    return at if _separator(window[at:]) == sep else None


def _separator(data: bytes) -> bytes | None:
    """The single separator the first line uses, or None when it mixes or doubles them."""
    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).rstrip(b"\r")
    if b"\t" in first and b" " not in first:
        return b"\t"
    if b" " in first and b"\t" not in first and b"  " not in first:
        return b" "
    return None


def _found(data: bytes, pattern: str) -> bool:
    """Whether RE2 finds `pattern` in `data`, read byte-wise (Latin-1) in one pass, no copy."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = pa.py_buffer((0).to_bytes(8, "little") + len(data).to_bytes(8, "little"))
    whole = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    return bool(pc.match_substring_regex(whole, pattern)[0].as_py())


def _odd_fields(data: bytes, sep: bytes) -> bool:
    """Whether the bytes hold a trailing separator, a comment line or an empty field (a
    doubled separator, one at a line's start or end): one RE2 pass over them for all."""
    s = "\\t" if sep == b"\t" else "\\x20"
    return _found(data, f"{s}$|\\n#|{s}{s}|\\n{s}|{s}\\n|{s}\\r")


def _layout(data: bytes, sep: bytes) -> bool | None:
    """None when the line ends or the start send the file to the exact reader; else whether
    it is plain: printable ASCII, `sep` and line ends (LF, CRLF) only. (The fields are
    `_odd_fields`' to check.)"""
    # Arrow's reader skips a byte order mark: a separator after one is an empty first field.
    if data[:4].removeprefix(_BOM).startswith((sep, b"#")):
        return None
    # One pass keeps what is not printable ASCII, `sep` or LF: carriage returns are counted in
    # that (short, for a plain file) rest, and the whole text is searched again only for CRLF.
    rest = data.translate(None, _PRINTABLE + sep)
    returns = rest.count(b"\r")
    if returns and returns != data.count(b"\r\n"):
        return None
    return not rest.strip(b"\r")


def _read(
    data: bytes | None, columns: tuple[str, ...], keep: tuple[str, ...], score: bool = False
) -> pa.Table | None:
    """The columns `keep` of a file's bytes `data` as text (`score` as a double, read by
    Arrow's CSV reader, when asked), when the bytes allow the fast path and every field of a
    file that is not plain ASCII holds a character an id may hold."""
    sep = None if data is None else _separator(data)
    if data is None or sep is None:
        return None
    plain = _layout(data, sep)
    if plain is None:
        return None
    # The RE2 pass over the bytes runs beside Arrow's reader (both let other threads run); a
    # table read from bytes it finds odd is thrown away.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgepool-bytes") as side:
        odd = side.submit(_odd_fields, data, sep)
        table = _csv(data, sep, columns, keep if plain else columns, score)
    if odd.result() or table is None:
        return None
    return _checked(table, columns, keep, plain, score)


def _csv(
    data: bytes, sep: bytes, columns: tuple[str, ...], read: tuple[str, ...], score: bool
) -> pa.Table | None:
    """Arrow's CSV reader over the bytes: the columns `read`, as text (`score` as a double when
    asked), or None when it refuses them (a column count, a score it cannot read)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    try:
        table = csv.read_csv(
            pa.py_buffer(data),
            read_options=csv.ReadOptions(column_names=list(columns)),
            parse_options=csv.ParseOptions(
                delimiter=sep.decode(), quote_char=False, double_quote=False, escape_char=False
            ),
            convert_options=csv.ConvertOptions(
                column_types={
                    **dict.fromkeys(columns, pa.string()),
                    **({"score": pa.float64()} if score else {}),
                },
                include_columns=list(read),
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a column count, a score not read
        return None
    return table


def _checked(
    table: pa.Table, columns: tuple[str, ...], keep: tuple[str, ...], plain: bool, score: bool
) -> pa.Table | None:
    """The columns `keep` of a table read, or None when a value sends the file to the exact
    reader: no row, a NaN or null score, an id of a file that is not plain ASCII holding a
    character an id may not hold."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return None
    if score:
        # NaN, or a word Arrow reads as null (`NA`, `-nan`): the exact reader refuses it.
        scores = table.column("score")
        if scores.null_count or pc.any(pc.is_nan(scores)).as_py():
            return None
    if not plain:
        for name in columns:
            if pa.types.is_string(table.column(name).type) and (
                pc.any(pc.match_substring_regex(table.column(name), SQL_BAD_ID)).as_py()
            ):
                return None
        table = table.select(list(keep))
    return table


def _full(column: pa.ChunkedArray, pattern: str) -> bool:
    import pyarrow.compute as pc

    return bool(pc.all(pc.match_substring_regex(column, f"^(?:{pattern})$")).as_py())


def scan_run(
    path: Path, piece: tuple[int, int] | None = None
) -> tuple[pa.Table, str | None] | None:
    """The TREC run at `path` (or the bytes `piece` = (start, end) of it, from `query_pieces`)
    as (qid, doc_id, score DOUBLE) and its tag when every line carries the same one, or None
    when the exact reader must read it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = _bytes(path) if piece is None else _piece(path, *piece)
    table = _read(data, _RUN, ("qid", "doc_id", "score", "tag"), score=True)
    if table is None:
        return None
    score = table.column("score")
    tags = pc.min_max(table.column("tag"))
    low, high = tags["min"].as_py(), tags["max"].as_py()
    tag = str(low) if low == high else None
    run = pa.Table.from_arrays(
        [table.column("qid"), table.column("doc_id"), score], names=["qid", "doc_id", "score"]
    )
    return run, tag


def scan_qrels(path: Path) -> pa.Table | None:
    """TREC qrels as (qid, doc_id, grade INT32), or None when the exact reader must read them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _read(_bytes(path), _QRELS, ("qid", "doc_id", "grade"))
    if table is None or not _full(table.column("grade"), INTEGER):
        return None
    try:
        grade = pc.cast(table.column("grade"), pa.int32())
    except pa.ArrowInvalid:  # beyond 32 bits: the exact reader names the line
        return None
    return pa.Table.from_arrays(
        [table.column("qid"), table.column("doc_id"), grade], names=["qid", "doc_id", "grade"]
    )
