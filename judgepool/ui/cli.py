"""The `judgepool` command: global options, error reporting, and the registry of subcommands.

Errors from the libraries (`judgepool.errors.JudgepoolError`) print as `error: problem — what to do`
and exit with the error's code; set JUDGEPOOL_DEBUG=1 to see the traceback instead. A fault of the
machine (disk full, permission denied, read-only file system: `judgepool.host.host_error`) is
said as such; only what is left is reported as a bug. A subcommand's module is imported only
when that command runs (COMMANDS), and heavy libraries inside the commands that need them, so
`judgepool --help` stays instant and `judgepool eval` loads what evaluating needs, no more.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from pathlib import Path

import click

from judgepool.api.store import DEFAULT_DB, ENV_DB, Store
from judgepool.errors import JudgepoolError
from judgepool.host import host_error, whole_writes_to_stdout
from judgepool.ui.leave import leave
from judgepool.ui.reporting import debug_enabled, report_error

# numpy's OpenBLAS, before anything imports numpy: judgepool's matrix products are small (a
# bootstrap block is 500 resamples x the queries, times the queries x the runs' measures), and
# BLAS threads cost more than they save there: `eval` of 17 runs spent 0.33 s in the bootstrap's
# products with them and 0.01 s without, on a busy 2-core machine (the figures are the same
# bits). A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# Each subcommand's module, loaded only when that command runs (or when --help lists them all):
# `judgepool eval` then imports what evaluating needs, not the judge, the dashboard launcher or
# the demo. The key is the command's name (a test holds that each module's command has it).
COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("data", "ingest"),
    "pool": ("pool", "pool"),
    "labels": ("labels", "labels"),
    "runs": ("info", "runs"),
    "queries": ("info", "queries"),
    "status": ("info", "status"),
    "judge": ("judge", "judge"),
    "judges": ("judges", "judges"),
    "eval": ("evaluate", "eval_command"),
    "compare": ("evaluate", "compare_command"),
    "report": ("report", "report"),
    "floors": ("floors", "floors"),
    "calibrate": ("trust", "calibrate"),
    "audit": ("trust", "audit"),
    "export": ("export", "export"),
    "ui": ("serve", "ui"),
    "demo": ("demo", "demo"),
    "prompt": ("prompt", "prompt"),
    "doctor": ("doctor", "doctor"),
}


class _Commands(click.Group):
    """The `judgepool` group, whose subcommands are imported on first use (see COMMANDS)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name]
            loaded = importlib.import_module(f"judgepool.ui.commands.{module}")
            self.add_command(getattr(loaded, attribute), cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=_Commands, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--db",
    "db",
    metavar="FILE",
    default=None,
    help=f"The database file [env {ENV_DB}; default ./{DEFAULT_DB}].",
)
@click.version_option(package_name="judgepool", prog_name="judgepool")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """judgepool: pool runs, backfill unjudged pairs with a judge, compare runs fairly.

    \b
    A typical session:
      judgepool ingest queries topics.tsv
      judgepool ingest docs passages.jsonl
      judgepool ingest qrels qrels.txt
      judgepool ingest run bm25.trec --name bm25
      judgepool pool --depth 10
      judgepool judge --model openai/gpt-4o-mini --depth 10
      judgepool compare bm25 splade
    """
    ctx.obj = Store(db)


def report_click_error(err: click.ClickException) -> None:
    """A bad command line (click's own checks) in our form: `error: problem — what to do`."""
    problem = " ".join(err.format_message().split())
    if isinstance(err, click.UsageError):
        path = err.ctx.command_path if err.ctx is not None else "judgepool"
        hint = f"see `{path} -h` for what it takes"
    else:
        hint = "check the path and the file's permissions"
    click.echo(f"error: {problem} — {hint}", err=True)


def _quiet_stdout() -> None:
    """After stdout failed (a full disk behind it), point it at /dev/null so the interpreter's
    last flush cannot print a second, raw error."""
    try:
        sys.stdout.flush()
    except OSError:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _databases(argv: list[str] | None) -> list[Path]:
    """The database file the command line names (its `--db`, else JUDGEPOOL_DB or the default),
    read by click without running anything: named when a full disk's error names no file."""
    args = sys.argv[1:] if argv is None else argv
    with contextlib.suppress(Exception):
        ctx = cli.make_context("judgepool", list(args), resilient_parsing=True)
        return [Store(ctx.params.get("db")).path]
    return []


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `judgepool` console script (`argv` None: the process's own command
    line, and the process ends with the command, see ui/leave.py); `main(ARGS)` runs `judgepool
    ARGS` inside the caller's process and raises SystemExit with its status."""
    try:
        _run(argv)
    except SystemExit as done:
        if argv is not None:
            raise
        leave(done.code)


def _run(argv: list[str] | None) -> None:
    """Run the command line; always ends in SystemExit with the exit status."""
    whole_writes_to_stdout()  # a disk that fills under our output is an error, not a short file
    try:
        code = cli.main(args=argv, prog_name="judgepool", standalone_mode=False)
    except JudgepoolError as err:
        report_error(err)
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        report_click_error(err)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as err:
        # the environment (disk full, permission denied ...): no bug
        found = host_error(err, places=_databases(argv))
        if found is not None:
            report_error(found)
            _quiet_stdout()
            sys.exit(found.exit_code)
        if debug_enabled():  # a bug: say so plainly, with the way to see more
            raise
        click.echo(
            f"error: unexpected {type(err).__name__}: {err} — this is a bug in judgepool; "
            "run again with JUDGEPOOL_DEBUG=1 for the traceback and report it",
            err=True,
        )
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
