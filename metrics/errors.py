"""The comparison's errors (below pooling/errors.py's JudgepoolError): the gate's refusal, a
broken --fail-on rule, a run under a floor. The CLI exits with each one's `exit_code`."""

from __future__ import annotations

from typing import Any

from judgepool.pooling.errors import JudgepoolError


class GateRefusedError(JudgepoolError):
    """A comparison refused because some run is under the judged@k gate (exit code 3).

    `comparison` holds the refused comparison when the library raised it (`db.compare`): its
    `refused` table names the runs, and its evaluation is there to look at.
    """

    exit_code = 3
    comparison: Any = None


class RuleFailedError(JudgepoolError):
    """`compare --fail-on RULE`: a candidate is significantly worse (or, for any-change,
    different) on a watched measure (exit code 4)."""

    exit_code = 4


class UnderFloorError(JudgepoolError):
    """`floors check`: a run's mean (or its interval's lower end) is under a floor (exit 5)."""

    exit_code = 5
