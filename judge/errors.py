"""The judge's errors (below pooling/errors.py's JudgepoolError): a judge that cannot be set up
or go on, a cap that stopped it, holes that failed. The CLI exits with each one's `exit_code`."""

from __future__ import annotations

from judgepool.pooling.errors import JudgepoolError


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
