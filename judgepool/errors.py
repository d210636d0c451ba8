"""Every error judgepool raises, in one place for library users: `except jp.errors.InputError`.

    JudgepoolError            the base: `str(err)` is the problem, `err.hint` what to do
    ├── InputError            a file or DataFrame we were given is malformed (where, what)
    │   └── UnknownFormatError    its format cannot be told
    ├── UsageError            an option or argument that cannot work
    ├── DatabaseError         the database is missing, not ours, too new or unusable
    │   └── DatabaseBusyError     another process held it longer than we wait
    ├── JudgeError            a judge could not be set up or reached
    │   └── BudgetExceededError   a cost or call cap stopped the work cleanly
    └── GateRefusedError      a comparison refused: a run is under the judged@k gate

The CLI prints each as `error: <problem> — <hint>` and exits with `err.exit_code`.
"""

from judgepool.pooling.errors import (
    BudgetExceededError,
    DatabaseBusyError,
    DatabaseError,
    GateRefusedError,
    InputError,
    JudgeError,
    JudgepoolError,
    UnknownFormatError,
    UsageError,
)

__all__ = [
    "BudgetExceededError",
    "DatabaseBusyError",
    "DatabaseError",
    "GateRefusedError",
    "InputError",
    "JudgeError",
    "JudgepoolError",
    "UnknownFormatError",
    "UsageError",
]
