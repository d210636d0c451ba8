"""The base of judgepool's one exception tree, and the errors of data and the database.

Every error a user can cause or fix is a JudgepoolError. Each package defines its own below the
base (dependencies point one way, so pooling/ cannot import them): judge/errors.py the judge's,
metrics/errors.py the comparison's; judgepool/errors.py gathers the whole tree for library users.

Each error carries the problem (`str(err)`) and, where we know it, `hint`: what to do about it.
The CLI prints `error: <problem> — <hint>` and exits with `exit_code`; library users catch
`JudgepoolError` (or a subclass) and get the same two pieces as attributes.

    JudgepoolError
    ├── InputError            a file we were asked to read is malformed (file, line, what)
    │   └── UnknownFormatError    we cannot tell what format a file is in
    ├── UsageError            an option or argument that cannot work (unknown run, bad level ...)
    ├── DatabaseError         the database file is missing, too new, or unusable
    │   └── DatabaseBusyError     another process holds the database longer than we wait
    ├── JudgeError            (judge/errors.py) a judge could not be set up or go on
    │   ├── BudgetExceededError   a --max-cost / --max-calls cap stopped the work cleanly (6)
    │   └── HolesFailedError      some holes ended in error or unparsed (4)
    │       └── NothingLabelledError  every hole attempted failed (5)
    ├── GateRefusedError      (metrics/errors.py) a run's judged@k is under the gate (3)
    ├── RuleFailedError       `compare --fail-on`: a candidate broke a rule (4)
    ├── UnderFloorError       `floors check`: a run's mean is under a floor (5)
    └── HostError             the machine refused: disk full, permission denied, read-only ...
"""

from __future__ import annotations

import errno
import re
from pathlib import Path


class JudgepoolError(Exception):
    """Base of every judgepool error; `hint` says what to do, `exit_code` is for the CLI."""

    exit_code: int = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class InputError(JudgepoolError):
    """A malformed input file (or DataFrame); names it and, when it applies, the 1-based line
    (`unit` "row" for a DataFrame)."""

    exit_code = 2

    def __init__(
        self,
        path: str | Path,
        problem: str,
        line: int | None = None,
        hint: str | None = None,
        unit: str = "line",
    ) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}, {unit} {line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}", hint)


class UnknownFormatError(InputError):
    """The format of a file could not be told from its name or its first bytes."""


class UsageError(JudgepoolError):
    """An option, argument or name that cannot work as given."""

    exit_code = 2


class DatabaseError(JudgepoolError):
    """The database file is missing, was written by a newer judgepool, or is otherwise unusable."""


class DatabaseBusyError(DatabaseError):
    """Another process held the database for longer than we were willing to wait."""









class HostError(JudgepoolError):
    """The machine refused: a full disk, a permission, a read-only file system, no memory.

    Not a bug in judgepool and not a bad input: the message says what the machine refused and
    where, the hint what to change in the environment. Made by `host_error` from an `OSError`
    or a DuckDB error that carries one."""


# errno -> (what happened, what to do); {where} is the file or folder concerned.
_HOST_PROBLEMS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: (
        "disk full: no space left on the device of {where}",
        "free some space there, or point judgepool at another disk (--db / JUDGEPOOL_DB for "
        "the database, -o for an export, JUDGEPOOL_CACHE_DIR for the judge's cache), then run "
        "the command again",
    ),
    errno.EDQUOT: (
        "disk quota exceeded writing {where}",
        "free some of your space there, or point judgepool at another disk (--db, -o, "
        "JUDGEPOOL_CACHE_DIR), then run the command again",
    ),
    errno.EACCES: (
        "permission denied: {where}",
        "check who may read and write there (ls -ld {where}), or choose a path you can write",
    ),
    errno.EPERM: (
        "operation not permitted: {where}",
        "check the owner and flags there (ls -ld {where}), or choose a path you can write",
    ),
    errno.EROFS: (
        "read-only file system: {where}",
        "write to a writable disk instead (another -o, --db / JUDGEPOOL_DB or "
        "JUDGEPOOL_CACHE_DIR)",
    ),
    errno.EIO: (
        "input/output error on {where}",
        "the disk or network file system failed; check it (dmesg, df), then run again",
    ),
    errno.EMFILE: (
        "too many open files (at {where})",
        "raise the limit (ulimit -n 4096) or close other programs, then run again",
    ),
    errno.ENFILE: (
        "the system has too many open files (at {where})",
        "close other programs, then run again",
    ),
    errno.ENOMEM: (
        "out of memory (at {where})",
        "close other programs, or work on fewer runs at once (--run NAME), then run again",
    ),
    errno.EFBIG: (
        "file too large: {where}",
        "the file system or a limit (ulimit -f) caps file sizes; write to another disk",
    ),
    errno.ENAMETOOLONG: ("file name too long: {where}", "choose a shorter path"),
}
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
_QUOTED_FILE = re.compile(r'file "([^"]+)"')


def _host(code: int, where: str | None, detail: str | None = None) -> HostError | None:
    found = _HOST_PROBLEMS.get(code)
    if found is None:
        return None
    place = where or "standard output"
    problem, hint = found
    said = problem.format(where=place) + (f" ({detail})" if detail else "")
    return HostError(said, hint.format(where=place))


def host_error(err: BaseException) -> HostError | None:
    """The environment problem behind `err` (an OSError, or a DuckDB error that reports one),
    or None when `err` is something else (then it may well be a bug)."""
    if isinstance(err, OSError) and err.errno is not None:
        where = err.filename if isinstance(err.filename, str) else None
        return _host(err.errno, where)
    if type(err).__module__.split(".")[0] in ("duckdb", "_duckdb"):
        text = str(err)
        lowered = text.lower()
        for words, code in _DUCKDB_WORDS:
            if words in lowered or (code == errno.ENOMEM and "OutOfMemory" in type(err).__name__):
                quoted = _QUOTED_FILE.search(text)
                return _host(code, quoted[1] if quoted else "the database", text)
    return None
