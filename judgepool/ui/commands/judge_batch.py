"""`judgepool judge --batch | --batch-status | --batch-collect | --batch-cancel ID`: batch judging.

The options are declared here (`batch_options`) and added to `judgepool judge`, which hands
over to `run_batch` when one of them is given. The work is the services of
judgepool/api/batch.py (which `jp.Database.submit_batch`, `batches`, `collect_batches` and
`cancel_batch` call too); judge_batch_report.py prints what they report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from judgepool.api.options import BATCH_POLL
from judgepool.api.store import Store
from judgepool.errors import UsageError
from judgepool.ui.format import note

if TYPE_CHECKING:
    from judgepool.api.options import JudgeOptions
    from judgepool.ui.commands.judge_batch_report import Shown

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
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
            default=BATCH_POLL,
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
    store: Store, options: JudgeOptions, dry_run: bool, progress: bool | None, **given: Any
) -> bool:
    """Do what the batch options ask (False when none was given: the online judge runs)."""
    chosen = [m for m in _MODES if given.get(m)]
    _check(dry_run, chosen, given)
    if not chosen:
        return False
    from judgepool.api import batch as service
    from judgepool.ui.commands import judge_batch_report as report

    mode, api_base = chosen[0], options.api_base
    if mode == "batch_status":
        report.print_status(service.status(store, api_base=api_base), store)
        return True
    if mode == "batch_cancel":
        name = str(given["batch_cancel"])
        report.print_cancelled(name, service.cancel(store, name, api_base=api_base), store)
        return True
    shown = report.Shown(progress, store, options, waiting=given["wait"])
    if mode == "batch_collect":
        collected = _waiting(
            store,
            lambda: service.collect(
                store,
                api_base=api_base,
                retry_failed=given["retry_failed"],
                wait=given["wait"],
                poll=given["poll"],
                max_cost=options.max_cost,
                max_calls=options.max_calls,
                progress=shown,
            ),
        )
        report.print_collection(collected.result, store)
        report.finish(collected.problem)
        return True
    if dry_run:
        report.print_forecast(service.submit(store, options, dry_run=True).result, options)
        return True
    submitted = _waiting(
        store,
        lambda: service.submit(
            store, options, wait=given["wait"], poll=given["poll"], progress=shown
        ),
        shown,
    )
    problem = submitted.problem
    if submitted.collection is not None:
        report.print_collection(submitted.collection.result, store)
        problem = problem or submitted.collection.problem
    report.finish(problem)
    return True


def _waiting(store: Store, work: Callable[[], T], shown: Shown | None = None) -> T:
    """Run `work`; Ctrl-C once batches are sent says they go on at the provider (`shown`: the
    submission's progress, which knows whether they are)."""
    try:
        return work()
    except KeyboardInterrupt:
        if shown is not None and not shown.submitted:
            raise
        note(
            "interrupted: the batches go on at the provider; collect them later with: "
            f"judgepool --db {store.path} judge --batch-collect"
        )
        raise SystemExit(130) from None
