"""How the command line reports a library error: `error: problem — what to do`, or the traceback
when JUDGEPOOL_DEBUG is set. Shared by the entry point and the demo, which replays commands.

The library says the remedy in its terms (`force=True`); here the same error object is said with
the command line's flags (`--force`) by `judgepool.reports.command_line.cli_words`."""

from __future__ import annotations

import os
import traceback

import click

from judgepool.errors import JudgepoolError, Remedy
from judgepool.reports.command_line import cli_words


def debug_enabled() -> bool:
    """Tracebacks are for developers: shown only when JUDGEPOOL_DEBUG is set (not 0/empty)."""
    return os.environ.get("JUDGEPOOL_DEBUG", "") not in ("", "0", "false", "no")


def on_the_command_line(err: JudgepoolError) -> str:
    """`problem — what to do`, with flags and commands as a user types them."""
    what, fix = err.say(cli_words)
    return what + (f" — {fix}" if fix else "")


def cli_remedy(said: str | Remedy | None) -> str | None:
    """A remedy (or a plain hint) said with the command line's flags."""
    return said.render(cli_words) if isinstance(said, Remedy) else said


def report_error(err: JudgepoolError, to_stderr: bool = True) -> None:
    """Print a library error as `error: problem — what to do` (with the traceback in debug)."""
    if debug_enabled():
        traceback.print_exc()
    click.echo(f"error: {on_the_command_line(err)}", err=to_stderr)
