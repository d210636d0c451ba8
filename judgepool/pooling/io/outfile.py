"""Files judgepool writes on request (exports, reports): what may be replaced, the atomic write.

Every file a command writes for the user goes through `write_atomic`, which first asks
`check_target`: a file we write never replaces one we were not asked to replace. Refused, with
what to do, and left exactly as it was:
- the database judgepool works on (by identity: the same file under any path or hard link), and
  its write-ahead log;
- any DuckDB database, told by its magic bytes (`DUCK` at offset 8), whatever its name;
- a folder, a symbolic link (replacing the link would cut it from its target), and anything that
  is not a regular file: a device, a named pipe, a socket (replacing them with a regular file
  breaks whoever uses them; to write into one, redirect standard output instead).
A regular file (or a new name in an existing folder) is written to a temporary file in the same
folder, flushed to disk and renamed over the target: a reader sees the old file or the new one,
never half of one, and a failure leaves no partial file behind.
"""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from judgepool.errors import Call, UsageError, remedy
from judgepool.host import naming

DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT = 8


def is_duckdb_file(path: Path) -> bool:
    """Whether a regular file starts like a DuckDB database (magic bytes, not the name)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_MAGIC_AT + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[_MAGIC_AT:] == DUCKDB_MAGIC


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def export_call(path: str | None) -> Call:
    """The call that writes the qrels export to `path` (None: to standard output)."""
    return Call.of("export_qrels", *([] if path is None else [path]))


def check_target(
    path: str | os.PathLike[str],
    protect: Sequence[Path] = (),
    writer: Callable[[str | None], Call] = export_call,
    example: str = "qrels.txt",
) -> Path:
    """Refuse a target that must not be replaced (see the module docstring); `protect` names
    the database in use (its write-ahead log is protected with it). `writer` makes the call that
    writes the file to a path (None: to standard output) and `example` is a file name, for the
    advice."""
    target = Path(path)
    shown = str(path)
    another = remedy("choose another file, e.g. `{}`", writer(example))
    for db in protect:
        wal = Path(f"{db}.wal")
        if target.exists() and db.exists() and _same_file(target, db):
            raise UsageError(
                f"refusing to write onto {shown}: it is the database judgepool works on",
                another,
                value=shown,
            )
        if target.resolve() == wal.resolve():
            raise UsageError(
                f"refusing to write onto {shown}: it is the write-ahead log of the database {db}",
                another,
                value=shown,
            )
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return target
    kind = _kind(mode)
    if kind == "a folder":
        raise UsageError(
            f"refusing to write onto {shown}: it is a folder",
            remedy("give a file name inside it, e.g. `{}`", writer(str(target / example))),
            value=shown,
        )
    if kind == "a symbolic link":
        raise UsageError(
            f"refusing to write onto {shown}: it is a symbolic link (to {os.readlink(target)}); "
            "judgepool replaces only regular files",
            remedy("give the file itself (`{}`) or another name", writer(str(target.resolve()))),
            value=shown,
        )
    if kind is not None:
        raise UsageError(
            f"refusing to write onto {shown}: it is {kind}, not a regular file",
            remedy("to write into it, name no file and redirect the output: {}", writer(None))
            + f" > {shlex.quote(shown)}",
            value=shown,
        )
    if is_duckdb_file(target):
        raise UsageError(
            f"refusing to write onto {shown}: it is a DuckDB database, not an output file",
            another,
            value=shown,
        )
    return target


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    protect: Sequence[Path] = (),
    writer: Callable[[str | None], Call] = export_call,
    example: str = "qrels.txt",
) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`,
    after `check_target` (which refuses the database, DuckDB files and non-regular files)."""
    target = check_target(path, protect, writer, example)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(
            f"folder {folder} does not exist",
            remedy("create it, or choose another file, e.g. `{}`", writer(example)),
            value=str(folder),
        )
    mode = stat.S_IMODE(os.lstat(target).st_mode) if target.exists() else 0o644
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as err:  # say the folder, not the name of a temporary file never made
        raise OSError(err.errno, err.strerror, str(folder)) from err
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600; keep the old file's mode, else rw-r--r--
        with naming(target), os.fdopen(fd, "wb") as fh:  # say the file the user named
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
