"""Every error judgepool raises, in one place for library users: `except jp.errors.InputError`.

One tree with one base; each package defines the errors that are its own (dependencies point one
way, so the base and the data errors live in pooling/errors.py, the judge's in judge/errors.py,
the comparison's in metrics/errors.py), and this module gathers them:

    JudgepoolError            the base: `str(err)` is the problem, `err.hint` what to do
    ├── InputError            a file or DataFrame we were given is malformed (where, what)
    │   └── UnknownFormatError    its format cannot be told
    ├── UsageError            an option or argument that cannot work
    ├── DatabaseError         the database is missing, not ours, too new or unusable
    │   └── DatabaseBusyError     another process held it longer than we wait
    ├── JudgeError            (judge/) a judge could not be set up or go on (no key, quota)
    │   ├── BudgetExceededError   a cost or call cap stopped the work cleanly (exit 6)
    │   └── HolesFailedError      some holes ended in error or unparsed (exit 4)
    │       └── NothingLabelledError  every hole attempted failed (exit 5)
    ├── GateRefusedError      (metrics/) a run is under the judged@k gate: refused (exit 3)
    ├── RuleFailedError       a `fail_on` rule broken: a candidate is significantly worse (exit 4)
    ├── UnderFloorError       a run's mean is under a floor (`check_floors`, exit 5)
    └── HostError             the machine refused: disk full, permission denied, read-only

The CLI prints each as `error: <problem> — <hint>` and exits with `err.exit_code`.
"""

from judgepool.judge.errors import (
    BudgetExceededError,
    HolesFailedError,
    JudgeError,
    NothingLabelledError,
)
from judgepool.metrics.errors import GateRefusedError, RuleFailedError, UnderFloorError
from judgepool.pooling.errors import (
    DatabaseBusyError,
    DatabaseError,
    HostError,
    InputError,
    JudgepoolError,
    UnknownFormatError,
    UsageError,
)

__all__ = [
    "BudgetExceededError",
    "DatabaseBusyError",
    "DatabaseError",
    "GateRefusedError",
    "HolesFailedError",
    "HostError",
    "InputError",
    "JudgeError",
    "JudgepoolError",
    "NothingLabelledError",
    "RuleFailedError",
    "UnderFloorError",
    "UnknownFormatError",
    "UsageError",
]
