"""The one exception tree of judgepool: every error a user can cause or fix is one of these.

Each error carries the problem (`str(err)`) and, where we know it, `hint`: what to do about it.
The CLI prints `error: <problem> — <hint>` and exits with `exit_code`; library users catch
`JudgepoolError` (or a subclass) and get the same two pieces as attributes.

    JudgepoolError
    ├── InputError            a file we were asked to read is malformed (file, line, what)
    │   └── UnknownFormatError    we cannot tell what format a file is in
    ├── UsageError            an option or argument that cannot work (unknown run, bad level ...)
    ├── DatabaseError         the database file is missing, too new, or unusable
    │   └── DatabaseBusyError     another process holds the database longer than we wait
    ├── JudgeError            a judge could not be set up or go on (no key, no quota, no model)
    │   ├── BudgetExceededError   a --max-cost / --max-calls cap stopped the work cleanly (6)
    │   └── HolesFailedError      some holes ended in error or unparsed (4)
    │       └── NothingLabelledError  every hole attempted failed (5)
    └── GateRefusedError      a comparison refused because a run's judged@k is under the gate
"""

from __future__ import annotations

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
    """A malformed input file; names the file and, when it applies, the 1-based line."""

    exit_code = 2

    def __init__(
        self,
        path: str | Path,
        problem: str,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}, line {line}" if line is not None else self.path
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


class JudgeError(JudgepoolError):
    """A judge could not be set up or reached (unknown model, missing key, bad api_base)."""


class BudgetExceededError(JudgeError):
    """A budget cap stopped labelling before it could be exceeded; what was done is kept."""

    exit_code = 6


class HolesFailedError(JudgeError):
    """A judge run finished, but some holes ended `error` or `unparsed` (they stay holes)."""

    exit_code = 4


class NothingLabelledError(HolesFailedError):
    """A judge run finished without labelling anything: every hole it attempted failed."""

    exit_code = 5


class GateRefusedError(JudgepoolError):
    """A comparison refused because some run is under the judged@k gate (exit code 3)."""

    exit_code = 3
