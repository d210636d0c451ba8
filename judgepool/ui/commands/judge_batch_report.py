"""What `judgepool judge --batch...` prints of what the services (judgepool/api/batch.py) report:
the dry run, the batches sent (`Shown`, told by the service before it waits), their status, what
a collection wrote (by status and grade, why pairs failed, judged@k before and after), and how
it exits (as `judgepool judge`: 0, 1 an error, 4 some pairs failed, 5 all failed, 6 a cap)."""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import TYPE_CHECKING

import click

from judgepool.api.batch import BatchProgress
from judgepool.api.progress import money
from judgepool.ui.commands.judge_report import print_judged
from judgepool.ui.format import echo_table, note
from judgepool.ui.reporting import on_the_command_line

if TYPE_CHECKING:
    from judgepool.api.batch import BatchRow, Collection, Submission
    from judgepool.api.options import JudgeOptions
    from judgepool.api.store import Store
    from judgepool.errors import JudgepoolError


class Shown(BatchProgress):
    """Prints what a submission sent as soon as it is sent (before a wait), and the remarks
    made on the way; draws the wait's bar."""

    def __init__(
        self, enabled: bool | None, store: Store, options: JudgeOptions, *, waiting: bool
    ) -> None:
        super().__init__(enabled)
        self.store, self.options, self.wait = store, options, waiting
        self.submitted = False

    def sent(self, submission: Submission) -> None:
        self.submitted = True
        print_submission(submission, self.store, self.options, waiting=self.wait)

    def note(self, message: str) -> None:
        note(message)


def command(store: Store, *args: str) -> str:
    """A judge command on this database, for copying."""
    return shlex.join(["judgepool", "--db", str(store.path), "judge", *args])


def size(count: int) -> str:
    """Bytes for people: 16.2 kB, 54.3 MB."""
    return f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.1f} kB"


def _when(value: datetime | None) -> str:
    return "-" if value is None else f"{value:%Y-%m-%d %H:%M}"


def _prices(found: Submission) -> str:
    if found.batch_cost is None:
        return (
            "unknown: the model has no price in litellm's price map (a local server or a "
            "new model); cap it with --max-calls"
        )
    worst = f", worst case {money(found.worst_cost)}" if found.worst_cost is not None else ""
    return (
        f"{money(found.batch_cost)} at batch price ({found.price_basis}){worst}; "
        f"online it would be {money(found.online_cost)}"
    )


def _heading(found: Submission, options: JudgeOptions) -> None:
    note(
        f"judge: {found.labeller} as a batch; {found.holes} holes at depth {options.depth} "
        f"({options.level} level)"
    )


def print_forecast(found: Submission, options: JudgeOptions) -> None:
    _heading(found, options)
    held = f"{', '.join(found.claimed_by)}" if found.claimed_by else "not sent again"
    rows = [
        ("holes", found.holes, ""),
        ("without text", found.no_text, "labelled no_text, no request"),
        ("already in the cache", found.cached_pairs, f"{found.cached_unique} distinct texts"),
        ("in an open batch or held", found.claimed, held),
        ("to send", found.pairs, f"{found.lines} requests (same text: one)"),
        ("left out by a cap", found.not_sent, found.stopped or ""),
        ("truncated passages", found.truncated, "cut to --passage-tokens"),
        ("truncated queries", found.queries_truncated, "cut to --query-tokens"),
    ]
    echo_table(("dry run (batch)", "pairs", ""), rows, right=(1,))
    sizes = ", ".join(f"{n:,} requests / {size(b)}" for n, b in found.files)
    click.echo(
        f"batch files: {len(found.files)} ({sizes or 'nothing to send'}); limits: {found.limits}"
    )
    max_out = options.max_tokens or 256
    click.echo(
        f"estimated tokens: {found.tokens_in:,} in, {found.tokens_out:,} out (typical "
        f"answer; at most {max_out} out per request)"
    )
    click.echo(f"estimated cost: {_prices(found)}")
    if found.readiness is not None:
        note(f"note: a real run would stop here: {on_the_command_line(found.readiness)}")


def _batch_rows(rows: list[BatchRow]) -> list[tuple[object, ...]]:
    return [
        (
            r.name,
            r.status,
            r.requests,
            r.completed,
            r.failed,
            r.pairs,
            r.model,
            _when(r.provider_created_at or r.created_at),
            _when(r.collected_at),
        )
        for r in rows
    ]


_HEADERS = (
    "batch",
    "status",
    "requests",
    "done",
    "failed",
    "pairs",
    "model",
    "created (UTC)",
    "collected (UTC)",
)


def print_submission(
    found: Submission, store: Store, options: JudgeOptions | None = None, waiting: bool = False
) -> None:
    """What `--batch` did (with `options`: its heading, as the dry run has it)."""
    if options is not None:
        _heading(found, options)
    for row in found.adopted:
        note(
            f"found batch {row.name} ({row.status}), which a stopped judgepool had created "
            "without recording it: recorded now, nothing sent again"
        )
    if found.resumed:
        note(
            f"planned again what a stopped judgepool had recorded but not sent ({found.resumed} "
            f"batch{'es' if found.resumed > 1 else ''}; a file it had uploaded is used again)"
        )
    if found.no_text or found.cached_pairs:
        click.echo(
            f"labelled now: {found.no_text} pairs without text (no_text), "
            f"{found.cached_pairs} from the cache (cost 0)"
        )
    if found.claimed:
        click.echo(
            f"{found.claimed} pairs are in open batches or being judged "
            f"({', '.join(found.claimed_by)}): not sent again"
        )
    if not found.sent:
        click.echo("nothing sent: no hole is left to send")
    else:
        click.echo(
            f"sent {len(found.sent)} batch{'es' if len(found.sent) > 1 else ''}: "
            f"{found.lines:,} requests for {found.pairs:,} pairs; estimated cost "
            f"{_prices(found)}"
        )
        echo_table(_HEADERS[:6], [r[:6] for r in _batch_rows(found.sent)], right=(2, 3, 4, 5))
    if found.sent and not waiting:
        due = max(r.due for r in found.sent)
        click.echo(f"check on them: {command(store, '--batch-status')}")
        click.echo(
            f"collect them:  {command(store, '--batch-collect')}  (the provider answers "
            f"within 24 h: by {due:%Y-%m-%d %H:%M} UTC)"
        )


def print_status(rows: list[BatchRow], store: Store) -> None:
    if not rows:
        click.echo(f"no batch in {store.path}: send one with judgepool judge --batch --model MODEL")
        return
    echo_table(_HEADERS, _batch_rows(rows), right=(2, 3, 4, 5))
    for row in rows:
        if row.last_error and row.collected_at is None:
            click.echo(f"{row.name}: {row.last_error}")
    ready = [r for r in rows if r.collected_at is None and r.finished]
    running = [r for r in rows if r.collected_at is None and not r.finished]
    if ready:
        click.echo(f"{len(ready)} finished, not collected: {command(store, '--batch-collect')}")
    if running:
        due = max(r.due for r in running)
        click.echo(
            f"{len(running)} open; the provider answers within 24 h: by {due:%Y-%m-%d %H:%M} UTC"
        )


def print_cancelled(name: str, row: BatchRow | None, store: Store) -> None:
    if row is None:
        click.echo(
            f"batch {name} had not been created at the provider: dropped, its pairs are holes again"
        )
        return
    click.echo(
        f"batch {row.name}: {row.status}; what it answered before stopping is collected "
        f"by {command(store, '--batch-collect')} (the rest become holes again)"
    )


def print_collection(found: Collection, store: Store) -> None:
    for row in found.adopted:
        note(
            f"found batch {row.name} ({row.status}), which a stopped judgepool had created "
            "without recording it: recorded now"
        )
    if found.collected:
        names = ", ".join(f"{r.name} ({r.status})" for r in found.collected)
        unpriced = f" + {found.unpriced} of unknown price" if found.unpriced else ""
        click.echo(
            f"collected {len(found.collected)} batch"
            f"{'es' if len(found.collected) > 1 else ''}: {names}; "
            f"cost ${found.cost:.4f} at batch price{unpriced}, tokens "
            f"{found.tokens_in:,} in / {found.tokens_out:,} out"
        )
        echo_table(("status", "pairs"), sorted(found.outcomes.items()), right=(1,))
        if found.grades:
            echo_table(("grade", "pairs"), sorted(found.grades.items()), right=(0, 1))
        for kind, pairs in found.failures.most_common():
            click.echo(f"failed: {pairs} pairs: {found.failure_examples.get(kind, kind)}")
        if found.outcomes["cancelled"]:
            click.echo(
                f"{found.outcomes['cancelled']} pairs were not answered before the "
                "cancel: they are holes again"
            )
        print_odd_lines(found)
        for before, after in found.judged:
            print_judged(before, after)
    for row in found.open:
        click.echo(
            f"{row.name} is {row.status} ({row.completed + row.failed:,} of "
            f"{row.requests:,} requests done): the provider answers within 24 h, by "
            f"{row.due:%Y-%m-%d %H:%M} UTC; run {command(store, '--batch-collect')} "
            "again then (or add --wait)"
        )
    for row in found.unsent:
        click.echo(
            f"{row.local_id} was recorded but not sent yet (status {row.status}): "
            f"{command(store, '--batch', '--model', row.model)} finishes sending it, "
            f"--batch-cancel {row.local_id} drops it"
        )
    for retried in found.retried:
        print_submission(retried, store)
    if not (found.collected or found.open or found.unsent or found.retried):
        click.echo("nothing to collect: every batch of this database is collected")


def print_odd_lines(found: Collection) -> None:
    """The output lines that were not one answer per request sent, each kind counted."""
    if found.unreadable:
        click.echo(
            f"output lines that could not be read (not JSON, or no custom_id): "
            f"{found.unreadable}; a request only they answered is counted as missing"
        )
    if found.unknown:
        shown = ", ".join(found.unknown[:3]) + (", ..." if len(found.unknown) > 3 else "")
        click.echo(
            f"output lines for custom_ids these batches never sent: {len(found.unknown)} "
            f"({shown}); ignored, no label written for them"
        )
    if found.repeated:
        click.echo(f"output lines repeating a request already answered: {found.repeated}")
    if found.conflicts:
        click.echo(
            f"requests answered with different grades: {found.conflicts}; their pairs stay "
            "holes (conflicting_answers): neither answer was chosen"
        )


def finish(problem: JudgepoolError | None) -> None:
    """Exit with the problem's code (0 when there is none)."""
    if problem is not None:
        raise problem
