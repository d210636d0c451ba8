"""Input files: telling their format, opening them (gzip or not) and reading them line by line.

Formats are told from the file name first (`.trec`, `.jsonl`, `.parquet`, `.tsv` ..., with an
optional `.gz`), then from the first bytes; a file whose format cannot be told is refused with the
list of formats that would work, never guessed. Line reading decodes UTF-8 strictly, one line at a
time, so an invalid byte is reported with its line number.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from judgepool.errors import InputError, Param, Remedy, UnknownFormatError, join, remedy

Kind = Literal["run", "qrels", "queries", "docs"]

#: The formats each kind of file may come in; the first is what `--format` documents first.
FORMATS: dict[str, tuple[str, ...]] = {
    "run": ("trec", "jsonl", "parquet"),
    "qrels": ("trec", "jsonl"),
    "queries": ("tsv", "jsonl"),
    "docs": ("jsonl", "tsv"),
}

_SUFFIXES: dict[str, str] = {
    ".trec": "trec",
    ".run": "trec",
    ".res": "trec",
    ".qrels": "trec",
    ".txt": "trec",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".tsv": "tsv",
    ".tab": "tsv",
}

GZIP_MAGIC = b"\x1f\x8b"
_UNREADABLE = "check that the file is complete (a truncated download or gzip?) and readable"
PARQUET_MAGIC = b"PAR1"


def is_gzip(path: Path) -> bool:
    """Whether the file starts with the gzip magic bytes (whatever its name says)."""
    with path.open("rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def open_binary(path: Path) -> BinaryIO:
    """Open a file for reading bytes, transparently decompressing gzip."""
    if is_gzip(path):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def check_readable(path: Path) -> None:
    """Refuse a missing, unreadable or empty file before any work starts."""
    if not path.exists():
        raise InputError(path, "no such file", hint="check the path")
    if path.is_dir():
        raise InputError(path, "is a folder, not a file", hint="give the path of a file")
    if path.stat().st_size == 0:
        raise InputError(path, "the file is empty", hint="give a file with at least one entry")


def _first_bytes(path: Path, n: int = 4096) -> bytes:
    try:
        with open_binary(path) as fh:
            return fh.read(n)
    except (OSError, EOFError) as err:  # a truncated or corrupt gzip stream
        raise InputError(path, f"cannot be read: {err}", hint=_UNREADABLE) from err


def detect_format(path: Path, kind: Kind, explicit: str | None = None) -> str:
    """The format of `path` as a file of `kind`: `explicit` if given, else from name or content."""
    allowed = FORMATS[kind]
    if explicit is not None:
        if explicit not in allowed:
            raise UnknownFormatError(
                path,
                f"format {explicit!r} is not one of the {kind} formats",
                hint="use " + _formats(allowed),
            )
        return explicit
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    by_name = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if by_name is not None and by_name in allowed:
        return by_name
    head = _first_bytes(path)
    if head.startswith(PARQUET_MAGIC):
        if "parquet" in allowed:
            return "parquet"
        rows = parquet_rows(path)
        raise UnknownFormatError(
            path,
            f"a Parquet file is not one of the {kind} formats"
            + (" (and this one has no rows)" if rows == 0 else ""),
            hint=f"give the {kind} as a {' or '.join(allowed)} file (polars converts a Parquet "
            'file: pl.read_parquet("in.parquet").write_ndjson("out.jsonl"))',
        )
    stripped = head.lstrip()
    if stripped.startswith(b"{") and "jsonl" in allowed:
        return "jsonl"
    # The first entry: TREC files may open with `#` comment lines, as trec_eval allows.
    lines = [line for line in stripped.split(b"\n") if line.strip()]
    entries = [line for line in lines if not line.lstrip().startswith(b"#")]
    first_line = (entries if kind in ("run", "qrels") and entries else lines or [b""])[0]
    if kind in ("run", "qrels"):
        columns = len(first_line.split())
        if (kind == "run" and columns == 6) or (kind == "qrels" and columns == 4):
            return "trec"
    if kind in ("queries", "docs") and b"\t" in first_line:
        return "tsv"
    raise UnknownFormatError(
        path,
        f"cannot tell the format of this {kind} file from its name or its first line",
        hint="name it with a known extension or pass " + _formats(allowed),
    )


def parquet_rows(path: Path) -> int | None:
    """The rows a Parquet file holds (from its footer), None when it cannot be read."""
    import pyarrow.parquet as pq

    try:
        return int(pq.read_metadata(path).num_rows)
    except Exception:  # a damaged file: whoever reads it next says so with its own error
        return None


def _formats(allowed: Sequence[str]) -> Remedy:
    """`format="trec" or format="jsonl"`: each choice as the parameter it is."""
    return join([remedy("{}", Param("format", f)) for f in allowed], " or ")


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, decoded line without its end) for every line of the file.

    Raises InputError naming the line on invalid UTF-8 or a corrupt gzip stream. A UTF-8 byte
    order mark at the start of the file is dropped.
    """
    try:
        with open_binary(path) as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise InputError(
                        path,
                        f"invalid UTF-8 (byte {err.start + 1} of the line)",
                        line=number,
                        hint="save the file as UTF-8",
                    ) from None
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError) as err:
        raise InputError(path, f"cannot be read: {err}", hint=_UNREADABLE) from err
