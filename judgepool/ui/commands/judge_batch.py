"""`judgepool judge --batch | --batch-status | --batch-collect | --batch-cancel ID`: batch judging.

The options are declared here (`batch_options`) and added to `judgepool judge`, which hands
over to `run_batch` when one of them is given. The work is judge/batch/session.py (the same
calls `jp.Database.submit_batch`, `batches`, `collect_batches` and `cancel_batch` make);
judge_batch_report.py prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgepool.errors import UsageError
from judgepool.pooling.store.connection import Store
from judgepool.ui.format import note

if TYPE_CHECKING:
    from judgepool.judge.session import JudgeSettings

F = TypeVar("F", bound=Callable[..., Any])
_MODES = ("batch", "batch_status", "batch_collect", "batch_cancel")
#: Options of the online judge that a batch does not use: refused rather than ignored.
_ONLINE_ONLY = ("concurrency", "retries", "timeout")


def batch_options(command: F) -> F:
    """Add the batch options to a click command."""
    options = [
        click.option(
            "--batch",
            is_flag=True,
            help="Send the holes to the provider's batch API (about half price, "
            "answered within 24 h) instead of calling it now; exits once sent.",
        ),
        click.option(
            "--batch-status",
            is_flag=True,
            help="List the batches of this database, asking the provider about the open ones.",
        ),
        click.option(
            "--batch-collect",
            is_flag=True,
            help="Write the labels of every finished batch (a no-op when there is "
            "none; says when open ones are due).",
        ),
        click.option(
            "--batch-cancel",
            metavar="ID",
            default=None,
            help="Ask the provider to stop batch ID (collect what it did with --batch-collect).",
        ),
        click.option(
            "--retry-failed",
            is_flag=True,
            help="With --batch-collect: send the pairs that failed (error, expired, "
            "unparsed) again, as a new batch.",
        ),
        click.option(
            "--wait",
            is_flag=True,
            help="With --batch or --batch-collect: wait for the batches to finish "
            "(progress bar), then collect them.",
        ),
        click.option(
            "--poll",
            type=click.FloatRange(min=0.01),
            default=30.0,
            show_default=True,
            metavar="SECONDS",
            help="With --wait: seconds between two looks at the open batches.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _check(dry_run: bool, chosen: list[str], given: dict[str, Any]) -> None:
    """Refuse combinations that cannot work, saying what to do."""
    ctx = click.get_current_context()
    if len(chosen) > 1:
        flags = " and ".join("--" + c.replace("_", "-") for c in chosen)
        raise UsageError(f"{flags} cannot be combined", "give one of them per command")
    mode = chosen[0] if chosen else None
    if given["retry_failed"] and mode != "batch_collect":
        raise UsageError(
            "--retry-failed goes with --batch-collect",
            "run: judgepool judge --batch-collect --retry-failed",
        )
    if given["wait"] and mode not in ("batch", "batch_collect"):
        raise UsageError(
            "--wait goes with --batch or --batch-collect",
            "add --batch (send and wait) or --batch-collect (wait and collect)",
        )
    if dry_run and mode not in (None, "batch"):
        raise UsageError(
            f"--dry-run does not go with --{(mode or '').replace('_', '-')}",
            "leave out --dry-run (--batch-status changes nothing)",
        )
    if dry_run and given["wait"]:
        raise UsageError("--dry-run sends nothing to wait for", "leave out --wait")
    if mode is None:
        return
    from click.core import ParameterSource

    online = [
        n
        for n in _ONLINE_ONLY
        if ctx.get_parameter_source(n) not in (None, ParameterSource.DEFAULT)
    ]
    if online:
        flags = ", ".join("--" + n for n in online)
        raise UsageError(
            f"{flags} apply to the online judge; a batch makes no calls of its own",
            f"leave out {flags}",
        )


def run_batch(
    store: Store, settings: JudgeSettings, dry_run: bool, progress: bool | None, **given: Any
) -> bool:
    """Do what the batch options ask (False when none was given: the online judge runs)."""
    chosen = [m for m in _MODES if given.get(m)]
    _check(dry_run, chosen, given)
    if not chosen:
        return False
    from judgepool.judge.batch import session
    from judgepool.ui.commands import judge_batch_report as report

    mode = chosen[0]
    if mode == "batch_status":
        report.print_status(session.status(store, settings.api_base), store)
        return True
    if mode == "batch_cancel":
        name = str(given["batch_cancel"])
        report.print_cancelled(name, session.cancel(store, name, settings.api_base), store)
        return True
    if mode == "batch_collect":
        collected = _waiting(
            store,
            lambda: session.collect(
                store,
                settings.api_base,
                given["retry_failed"],
                given["wait"],
                given["poll"],
                progress=progress,
                caps=settings,
                notify=note,
            ),
        )
        report.print_collection(collected, store)
        report.finish(collected.problem())
        return True
    if len(settings.models) > 1 or settings.num_samples > 1:
        raise UsageError(
            "--batch sends one model's requests once each; a jury (--model given twice, "
            "--num-samples) is judged online",
            "run the jury without --batch, or --batch with a single --model",
        )
    if dry_run:
        report.print_forecast(session.dry_run(store, settings), settings)
        return True
    submitted = session.submit(store, settings, notify=note)
    report.print_submission(submitted, store, settings, waiting=given["wait"])
    problem = submitted.problem(settings)
    if given["wait"] and submitted.sent:
        names = [r.local_id for r in submitted.sent]
        collected = _waiting(
            store,
            lambda: session.collect(
                store,
                settings.api_base,
                wait=True,
                poll=given["poll"],
                names=names,
                progress=progress,
                notify=note,
            ),
        )
        report.print_collection(collected, store)
        problem = problem or collected.problem()
    report.finish(problem)
    return True


def _waiting(store: Store, work: Callable[[], Any]) -> Any:
    """Run `work`; Ctrl-C while it waits says the batches go on at the provider."""
    try:
        return work()
    except KeyboardInterrupt:
        note(
            "interrupted: the batches go on at the provider; collect them later with: "
            f"judgepool --db {store.path} judge --batch-collect"
        )
        raise SystemExit(130) from None
