"""How the command line reports a library error: `error: problem — what to do`, or the traceback
when JUDGEPOOL_DEBUG is set. Shared by the entry point and the demo, which replays commands."""

from __future__ import annotations

import os
import traceback

import click

from judgepool.errors import JudgepoolError


def debug_enabled() -> bool:
    """Tracebacks are for developers: shown only when JUDGEPOOL_DEBUG is set (not 0/empty)."""
    return os.environ.get("JUDGEPOOL_DEBUG", "") not in ("", "0", "false", "no")


def report_error(err: JudgepoolError, to_stderr: bool = True) -> None:
    """Print a library error as `error: problem — what to do` (with the traceback in debug)."""
    if debug_enabled():
        traceback.print_exc()
    hint = f" — {err.hint}" if err.hint else ""
    click.echo(f"error: {err}{hint}", err=to_stderr)
