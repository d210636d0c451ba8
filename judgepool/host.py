"""The machine's refusals (disk full, permission denied, read-only ...) said as such: which file,
on which device, and what to do.

Why a module of its own: a full disk is only actionable when the message names the file that
could not be written and the device that filled (a user with three disks frees the wrong one
otherwise). The system does not always say: pyarrow, polars and a file object's `write` raise
`ENOSPC` without a file name, so judgepool's writers wrap their writes in `naming(path)`, and
`host_error` says the device of the named file (its mount point, file system and free space,
from /proc/self/mounts and statvfs). When no file is named at all, standard output is blamed only
when it really is on a full device (/dev/full, or a file on a disk with no room left); otherwise
the message says the system named no file and gives the free space of the places judgepool was
told about (`places`: the database).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import Call, HostError, Param, Part, Placeholder, Remedy

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["device_of", "host_error", "naming", "naming_sqlite", "whole_writes_to_stdout"]

_PATH = Placeholder("PATH")
_DB = Call.of("open", _PATH)  # --db PATH
_EXPORT = Call.of("export_qrels", _PATH)  # judgepool export qrels -o PATH
# errno -> (what happened, what to do, the parts of what to do); {where} is the file or folder
# concerned.
_HOST_PROBLEMS: dict[int, tuple[str, str, tuple[Part, ...]]] = {
    errno.ENOSPC: (
        "disk full: no space left on the device of {where}",
        "free some space there, or point judgepool at another disk ({} / JUDGEPOOL_DB for the "
        "database, {} for an export, JUDGEPOOL_CACHE_DIR for the judge's cache), then run "
        "the command again",
        (_DB, _EXPORT),
    ),
    errno.EDQUOT: (
        "disk quota exceeded writing {where}",
        "free some of your space there, or point judgepool at another disk ({}, {}, "
        "JUDGEPOOL_CACHE_DIR), then run the command again",
        (_DB, _EXPORT),
    ),
    errno.EACCES: (
        "permission denied: {where}",
        "check who may read and write there (ls -ld {where}), or choose a path you can write",
        (),
    ),
    errno.EPERM: (
        "operation not permitted: {where}",
        "check the owner and flags there (ls -ld {where}), or choose a path you can write",
        (),
    ),
    errno.EROFS: (
        "read-only file system: {where}",
        "write to a writable disk instead (another {}, {} / JUDGEPOOL_DB or JUDGEPOOL_CACHE_DIR)",
        (_EXPORT, _DB),
    ),
    errno.EIO: (
        "input/output error on {where}",
        "the disk or network file system failed; check it (dmesg, df), then run again",
        (),
    ),
    errno.EMFILE: (
        "too many open files (at {where})",
        "raise the limit (ulimit -n 4096) or close other programs, then run again",
        (),
    ),
    errno.ENFILE: (
        "the system has too many open files (at {where})",
        "close other programs, then run again",
        (),
    ),
    errno.ENOMEM: (
        "out of memory (at {where})",
        "close other programs, or work on fewer runs at once ({}), then run again",
        (Param("runs", (Placeholder("NAME"),)),),
    ),
    errno.EFBIG: (
        "file too large: {where}",
        "the file system or a limit (ulimit -f) caps file sizes; write to another disk",
        (),
    ),
    errno.ENAMETOOLONG: ("file name too long: {where}", "choose a shorter path", ()),
}
# Problems of space: for these the device and its free space are said.
_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
# The same problems as DuckDB words them inside its own exceptions.
_DUCKDB_WORDS: tuple[tuple[str, int], ...] = (
    ("no space left on device", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT),
    ("permission denied", errno.EACCES),
    ("read-only file system", errno.EROFS),
    ("too many open files", errno.EMFILE),
    ("input/output error", errno.EIO),
    ("out of memory", errno.ENOMEM),
)
# The same problems as SQLite (diskcache, the caches' store) words them; it names no file.
_SQLITE_WORDS: tuple[tuple[str, int], ...] = (
    ("database or disk is full", errno.ENOSPC),
    ("attempt to write a readonly database", errno.EROFS),
    ("disk i/o error", errno.EIO),
    ("unable to open database file", errno.EACCES),
)
_QUOTED_FILE = re.compile(r'file "([^"]+)"')
_NEARLY_FULL = 1 << 20  # bytes: a disk with less than this free has no room for our writes


@contextlib.contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Give `path` to an OSError raised inside without a file name (pyarrow, polars and file
    objects' `write` leave it out), so that the error can say which file could not be written."""
    try:
        yield
    except OSError as err:
        if err.filename is None and err.errno is not None:
            err.filename = os.fspath(path)
        raise


def _sqlite_errno(err: BaseException) -> int | None:
    if type(err).__module__ != "sqlite3":
        return None
    lowered = str(err).lower()
    return next((code for words, code in _SQLITE_WORDS if words in lowered), None)


@contextlib.contextmanager
def naming_sqlite(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Say a SQLite store's refusals (a full disk, a read-only folder) as the OSError they are,
    naming `folder`, where the store's files are: SQLite names none."""
    try:
        yield
    except Exception as err:
        code = _sqlite_errno(err)
        if code is None:
            raise
        raise OSError(code, os.strerror(code), os.fspath(folder)) from err


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # not reached


def _mount_point(path: Path) -> Path:
    """The mount point of the file system `path` (or its nearest existing folder) is on."""
    here = path.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    while not os.path.ismount(here) and here != here.parent:
        here = here.parent
    return here


def _file_system(mount: Path) -> str | None:
    """The type of the file system mounted at `mount` (Linux: /proc/self/mounts), or None."""
    found = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[1].replace("\\040", " ") == str(mount):
                found = fields[2]  # the last mount at a point is the one in force
    return found


def device_of(path: str | os.PathLike[str]) -> str | None:
    """`tmpfs mounted at /mnt/x: 262.1 kB, 0 B free now`: the device a path is on, its size
    and its free space now (after the failed write's cleanup); None when the system cannot
    tell."""
    place = Path(path)
    if place == Path("/dev/full"):
        return "/dev/full, which is always full"
    try:
        mount = _mount_point(place)
        disk = os.statvfs(mount)
    except OSError:
        return None
    kind = _file_system(mount)
    free, total = disk.f_bavail * disk.f_frsize, disk.f_blocks * disk.f_frsize
    return f"{kind or 'a file system'} mounted at {mount}: {_size(total)}, {_size(free)} free now"


def _stdout_full() -> str | None:
    """The device of standard output when it is full (else None: it is not to blame)."""
    try:
        fd = sys.stdout.fileno()
        info = os.fstat(fd)
    except (AttributeError, OSError, ValueError):
        return None
    with contextlib.suppress(OSError):
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == os.stat("/dev/full").st_rdev:
            return device_of("/dev/full")
    if not stat.S_ISREG(info.st_mode):
        return None  # a pipe or a terminal never fills
    try:
        disk = os.fstatvfs(fd)
    except OSError:
        return None
    if disk.f_bavail * disk.f_frsize >= _NEARLY_FULL:
        return None
    try:
        name = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"a disk with {_size(disk.f_bavail * disk.f_frsize)} free"
    return f"{name}, on {device_of(name) or 'a full disk'}"


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _host(
    code: int, where: str | None, detail: str | None, places: Sequence[Path], on_disk: bool = True
) -> HostError | None:
    found = _HOST_PROBLEMS.get(code)
    if found is None:
        return None
    notes = [detail] if detail else []
    if where is None and code in _SPACE and (output := _stdout_full()) is not None:
        where = "standard output"
        notes.insert(0, output)
    elif where is None:
        where = "a file the system did not name"
        if code in _SPACE:
            notes += [f"the database {p} is on {d}" for p in places if (d := device_of(p))]
            notes.append("standard output is not on a full disk")
    elif code in _SPACE and on_disk:
        notes.insert(0, device_of(where) or "")
    problem, hint, parts = found
    said = problem.format(where=where) + "".join(f" ({n})" for n in notes if n)
    return HostError(said, Remedy(hint.replace("{where}", _literal(where)), parts), value=where)


def host_error(err: BaseException, *, places: Sequence[Path] = ()) -> HostError | None:
    """The environment problem behind `err` (an OSError, or a DuckDB error that reports one),
    or None when `err` is something else (then it may well be a bug). `places`: the database
    files in use, named when the system names no file."""
    if isinstance(err, OSError) and err.errno is not None:
        where = os.fsdecode(err.filename) if isinstance(err.filename, str | bytes) else None
        return _host(err.errno, where, None, places)
    if (code := _sqlite_errno(err)) is not None:
        return _host(code, None, str(err), places)
    if type(err).__module__.split(".")[0] in ("duckdb", "_duckdb"):
        text = str(err)
        lowered = text.lower()
        for words, code in _DUCKDB_WORDS:
            if words in lowered or (code == errno.ENOMEM and "OutOfMemory" in type(err).__name__):
                quoted = _QUOTED_FILE.search(text)
                if quoted or places:
                    return _host(code, quoted[1] if quoted else str(places[0]), text, places)
                return _host(code, "the database", text, places, on_disk=False)
    return None


class _WholeWriter(io.BufferedWriter):
    """A BufferedWriter that writes all it is given, or raises. CPython's returns a short count
    when the disk fills mid-write, and TextIOWrapper ignores the count: `judgepool export qrels
    > full/file` wrote the first 256 kB, dropped the rest and exited 0. Here the next write
    raises ENOSPC, which the CLI says as a full disk."""

    def write(self, data: ReadableBuffer, /) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            wrote = super().write(view[done:])
            if not wrote:
                raise OSError(errno.EIO, "the write wrote nothing")
            done += wrote
        return done


def whole_writes_to_stdout() -> None:
    """When standard output is a file on disk, route it through `_WholeWriter`, so that a disk
    that fills while we print is an error, never a silently shortened file. (A pipe or a
    terminal blocks instead of writing short: they are left as they are.)"""
    out = sys.stdout
    try:
        fd = out.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):
        return  # not a real file descriptor (a test's capture): nothing to guard
    if not regular:
        return
    out.flush()
    buffer = _WholeWriter(io.FileIO(fd, "w", closefd=False))
    sys.stdout = io.TextIOWrapper(
        buffer, encoding=out.encoding, errors=out.errors, line_buffering=bool(out.line_buffering)
    )
