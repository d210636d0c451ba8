"""Every error judgepool raises, in one tree with one base: `except jp.errors.InputError`.

The bottom of the house (it imports nothing of judgepool), so that every layer raises from here
and a library user finds the whole tree in one place (httpx's errors.py is the model):

    JudgepoolError            the base: `str(err)` is the problem, `err.hint` what to do
    ├── InputError            a file or DataFrame we were given is malformed (file, line, what)
    │   └── UnknownFormatError    its format cannot be told
    ├── UsageError            an option or argument that cannot work (unknown run, bad level ...)
    ├── DatabaseError         the database is missing, not ours, too new or unusable
    │   └── DatabaseBusyError     another process held it longer than we wait
    ├── JudgeError            a judge could not be set up or go on (no key, quota, unknown model)
    │   ├── BudgetExceededError   a cost or call cap stopped the work cleanly (exit 6)
    │   └── HolesFailedError      some holes ended in error or unparsed (exit 4)
    │       └── NothingLabelledError  every hole attempted failed (exit 5)
    ├── GateRefusedError      a run is under the judged@k gate: refused (exit 3)
    ├── RuleFailedError       a `fail_on` rule broken: a candidate is significantly worse (exit 4)
    ├── UnderFloorError       a run's mean is under a floor (`check_floors`, exit 5)
    └── HostError             the machine refused: disk full, permission denied, read-only

Each error carries `what` went wrong, the offending `value`, and a `remedy` whose parameters
and calls are data (`Param("force")`, `Call.of("judge", model="offline")`): `err.hint` says it to
a library user (`force=True`), the CLI renders the same remedy with its flags (`--force`) and
prints `error: <what> — <remedy>`, exiting with `err.exit_code`. What went wrong may name a
parameter too (`Param("fail_on", None)`: `fail_on` here, `--fail-on` there): `err.statement`
holds it with its parts, and `err.say(words)` says both in the words of one renderer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BudgetExceededError",
    "Call",
    "DatabaseBusyError",
    "DatabaseError",
    "GateRefusedError",
    "HolesFailedError",
    "HostError",
    "InputError",
    "JudgeError",
    "JudgepoolError",
    "NothingLabelledError",
    "Param",
    "Placeholder",
    "Remedy",
    "RuleFailedError",
    "UnderFloorError",
    "UnknownFormatError",
    "UsageError",
    "counted",
]


class JudgepoolError(Exception):
    """Base of every judgepool error, with structured fields: `what` went wrong (also
    `str(err)`), the offending `value` when there is one, and the `remedy`, said in the library's
    terms by `hint` (`force=True`) and in the CLI's by the command line (`--force`).
    `exit_code` is for the CLI."""

    exit_code: int = 1

    def __init__(
        self, message: str | Remedy, hint: str | Remedy | None = None, *, value: object = None
    ) -> None:
        statement = _said(message)
        super().__init__(str(statement))
        self.statement = statement
        self.message = str(statement)
        self.value = value
        self.remedy = _as_remedy(hint)

    @property
    def what(self) -> str:
        """What went wrong, in one sentence."""
        return self.message

    @property
    def hint(self) -> str | None:
        """What to do, in the library's terms (parameters, `db.<verb>(...)` calls)."""
        return None if self.remedy is None else str(self.remedy)

    @hint.setter
    def hint(self, text: str | Remedy | None) -> None:
        self.remedy = _as_remedy(text)

    def say(self, words: Callable[[Part], str]) -> tuple[str, str | None]:
        """What went wrong and what to do, each part said by `words` (`library_words` gives
        `str(err)` and `err.hint`; the CLI passes its flags)."""
        fix = None if self.remedy is None else self.remedy.render(words)
        return self.statement.render(words), fix

    def __str__(self) -> str:
        return self.message


class InputError(JudgepoolError):
    """A malformed input file (or DataFrame); names it and, when it applies, the 1-based line
    (`unit` "row" for a DataFrame)."""

    exit_code = 2

    def __init__(
        self,
        path: str | Path,
        problem: str | Remedy,
        line: int | None = None,
        hint: str | Remedy | None = None,
        unit: str = "line",
    ) -> None:
        self.path = str(path)
        self.line = line
        said = _said(problem)
        self.problem = str(said)
        where = f"{self.path}, {unit} {line}" if line is not None else self.path
        super().__init__(Remedy(f"{_literal(where)}: {said.text}", said.parts), hint)


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
    """A comparison refused because some run is under the judged@k gate (exit code 3).

    `comparison` holds the refused comparison when the library raised it (`db.compare`): its
    `refused` table names the runs, and its evaluation is there to look at.
    """

    exit_code = 3
    comparison: Any = None


class RuleFailedError(JudgepoolError):
    """A `fail_on` rule broken: a candidate is significantly worse (or, for any-change,
    different) on a watched measure (exit code 4)."""

    exit_code = 4


class UnderFloorError(JudgepoolError):
    """A run's mean (or its interval's lower end) is under a floor (exit code 5)."""

    exit_code = 5


class HostError(JudgepoolError):
    """The machine refused: a full disk, a permission, a read-only file system, no memory.

    Not a bug in judgepool and not a bad input: the message says what the machine refused and
    where (the file, and for a full disk the device and its free space), the hint what to change
    in the environment. Made by `judgepool.host.host_error` from an `OSError` or a DuckDB error
    that carries one."""


# -- remedies: what to do, said in the caller's terms ----------------------------------------


@dataclass(frozen=True)
class Placeholder:
    """A value the caller fills in, shown by its name: `model=MODEL`, `--model MODEL`."""

    name: str

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


@dataclass(frozen=True)
class Param:
    """A parameter a remedy asks for: `force=True` to a library user, `--force` on the command
    line (the CLI maps names to flags; `value` None names the parameter alone: `fail_on`,
    `--fail-on`)."""

    name: str
    value: object = True


@dataclass(frozen=True)
class Call:
    """A call a remedy asks for: `db.judge(model="offline", depth=10)` to a library user,
    `judgepool judge --model offline --depth 10` on the command line. `verb` is the Database
    method's name (or `open` / `doctor`, judgepool's functions); `args` its positional arguments,
    `params` its keywords in order; `db` the database file, which the command line must name and
    a library user already holds."""

    verb: str
    args: tuple[object, ...] = ()
    params: tuple[tuple[str, object], ...] = ()
    db: str | None = None

    @classmethod
    def of(cls, verb: str, *args: object, **params: object) -> Call:
        """`Call.of("judge", model="offline")`: None-valued keywords are left out."""
        kept = tuple((k, v) for k, v in params.items() if v is not None and v is not False)
        return cls(verb, args, kept)

    def on(self, db: str | Path) -> Call:
        """The same call on the database file `db`."""
        return Call(self.verb, self.args, self.params, str(db))


Part = Param | Call


@dataclass(frozen=True)
class Remedy:
    """What to do about an error (or what went wrong): a sentence with a `{}` for each part, in
    order. `str()` says it to a library user; the CLI renders the same parts as flags and
    commands."""

    text: str
    parts: tuple[Part, ...] = ()

    def render(self, say: Callable[[Part], str]) -> str:
        """The sentence with each part said by `say`."""
        return self.text.format(*(say(p) for p in self.parts))

    def __str__(self) -> str:
        return self.render(library_words)

    def __add__(self, other: str | Remedy) -> Remedy:
        """This sentence, then `other` (plain text is taken as it is, braces and all)."""
        more = _said(other)
        return Remedy(self.text + more.text, self.parts + more.parts)

    def __radd__(self, other: str) -> Remedy:
        return _said(other) + self


def counted(count: int, noun: str) -> str:
    """`1 run`, `2 runs`: a count in people's words (issue 24 read "1 run(s)" as machine text)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def join(pieces: Sequence[str | Remedy], sep: str = ", ") -> Remedy:
    """The pieces, parts and all, with `sep` between them."""
    joined = Remedy("")
    for i, piece in enumerate(pieces):
        joined = joined + (sep if i else "") + piece
    return joined


def remedy(text: str, *parts: Part) -> Remedy:
    """`remedy("pass {} to compare anyway", Param("force"))`."""
    return Remedy(text, parts)


# judgepool's own functions (`jp.open`), as opposed to a Database's methods (`db.judge`).
_FUNCTIONS = frozenset({"open", "doctor"})


def library_words(part: Part) -> str:
    """A part as Python: `force=True`, `level="chunk"`, `db.judge(model="offline")`."""
    if isinstance(part, Param):
        return part.name if part.value is None else f"{part.name}={python_value(part.value)}"
    said = [python_value(a) for a in part.args]
    said += [f"{k}={python_value(v)}" for k, v in part.params]
    owner = "jp" if part.verb in _FUNCTIONS else "db"
    return f"{owner}.{part.verb}({', '.join(said)})"


def python_value(value: object) -> str:
    """A value as Python source: strings in double quotes (as ruff writes them), sequences as
    lists, a `Placeholder` by its name."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid Python literal too
    if isinstance(value, list | tuple):
        return "[" + ", ".join(python_value(v) for v in value) + "]"
    return repr(value)


def _literal(text: str) -> str:
    """`text` as it stands inside a Remedy's sentence (its braces kept)."""
    return text.replace("{", "{{").replace("}", "}}")


def _said(text: str | Remedy) -> Remedy:
    return text if isinstance(text, Remedy) else Remedy(_literal(text))


def _as_remedy(hint: str | Remedy | None) -> Remedy | None:
    return None if hint is None else _said(hint)
