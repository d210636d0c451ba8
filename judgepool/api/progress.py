"""How a long call shows its progress: a bar per labelling loop (done/total, cache hits, failures,
429s, cost, ETA) and one while batches run, drawn by tqdm on stderr (stdout stays for results)
on a terminal; elsewhere (a CI log, a pipe, `nohup`), unless turned off, a plain line every few
seconds, so that a log shows the run is alive and how far it is (issue 24: a DL19 judge run said
nothing for 12 minutes).

The judge draws nothing: it reports through judge/loop_state.py's `ProgressSink` and
judge/batch/wait.py's `WaitSink`, and whoever calls the service hands it a `Progress` that makes
them (`jp.Database`'s `progress=True`, and the CLI, which also prints the notes). The ETA is
tqdm's, from the pairs finished so far (cache hits arrive first and fast, so it settles once
calls dominate).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from judgepool.judge.progress_lines import clock as clock
from judgepool.judge.progress_lines import line_every as line_every
from judgepool.judge.progress_lines import so_far

if TYPE_CHECKING:
    from collections.abc import Callable

    from judgepool.judge.batch.wait import WaitSink
    from judgepool.judge.loop_state import LoopStats, ProgressSink


def money(cost: float | None) -> str:
    """$0.0123, or 'unknown' for a cost nobody can tell (a model with no known price)."""
    return "unknown" if cost is None else f"${cost:.4f}"


def cost_text(cost: float, unpriced_calls: int) -> str:
    """$0.0123, or 'unknown' / '$0.0123 + unknown' when some calls have no known price."""
    if unpriced_calls and cost == 0:
        return "unknown"
    text = f"${cost:.4f}"
    return f"{text} + unknown" if unpriced_calls else text


def _on_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def say(message: str) -> None:
    """One line on stderr, flushed at once (a log shows it as it happens)."""
    print(message, file=sys.stderr, flush=True)


class ProgressLines:
    """A `ProgressSink` for a log: every `every` seconds a line `judging X: 40 of 122 pairs
    (33 %), 12 cached, 0 failed, $0.0012; 14 s so far, about 28 s left`, and one at the end."""

    def __init__(self, total: int, what: str | None, every: float | None = None) -> None:
        self.total = total
        self.what = f"judging {what}" if what else "judging"
        self.every = line_every() if every is None else every
        self.started = time.monotonic()
        self.last = self.started
        self.done = 0
        self.stats: LoopStats | None = None
        self.pace: tuple[float, int] | None = None  # the first update: the pace counts from it

    def update(self, stats: LoopStats, advanced: int) -> None:
        if self.pace is None:  # after the judge's preparation (a model's load is not the pace)
            self.pace = (time.monotonic(), stats.done - advanced)
        self.done = stats.done  # with the pairs counted without a call (no text)
        self.stats = stats
        now = time.monotonic()
        if now - self.last >= self.every and self.done < self.total:
            self.last = now
            say(self._line())

    def _line(self) -> str:
        share = f" ({100 * self.done / self.total:.0f} %)" if self.total else ""
        text = f"{self.what}: {self.done} of {self.total} pairs{share}"
        stats = self.stats
        if stats is not None:
            failed = stats.outcomes["error"] + stats.outcomes["unparsed"]
            text += f", {stats.cached + stats.shared} cached, {failed} failed"
            text += f", {cost_text(stats.cost, stats.unpriced_calls)}"
        return f"{text}; {so_far(self.started, self.done, self.total, self.pace)}"

    def note(self, message: str) -> None:
        say(message)

    def preparing(self, message: str) -> None:
        """How far the judge's preparation is (the offline judge's embedding)."""
        say(message)

    def close(self) -> None:
        if self.stats is not None and time.monotonic() - self.started >= self.every:
            say(self._line())  # a long run ends its log with its last figures


class WaitLines:
    """A `WaitSink` for a log: a line every `every` seconds while batches run."""

    def __init__(self, total: int, every: float | None = None) -> None:
        self.total = total
        self.every = line_every() if every is None else every
        self.started = time.monotonic()
        self.last = self.started

    def show(self, done: int, statuses: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            say(
                f"waiting for batches: {done} of {self.total} requests done ({statuses}); "
                f"{clock(now - self.started)} so far"
            )

    def close(self) -> None:
        pass


class ProgressBar:
    """A `ProgressSink` drawing a tqdm bar (None `enabled`: when stderr is a terminal)."""

    def __init__(self, total: int, enabled: bool | None = None, what: str | None = None) -> None:
        from tqdm import tqdm

        self._bar: Any = tqdm(
            total=total,
            desc=what,
            unit="pair",
            file=sys.stderr,
            disable=(not enabled) if enabled is not None else None,
            dynamic_ncols=True,
            smoothing=0.05,
        )

    @property
    def preparing(self) -> Callable[[str], None] | None:
        """How far the judge's preparation is, above the bar (None: no bar, nothing said)."""
        return None if self._bar.disable else self.note

    def update(self, stats: LoopStats, advanced: int) -> None:
        self._bar.update(advanced)
        self._bar.set_postfix(
            cached=stats.cached + stats.shared,
            failed=stats.outcomes["error"] + stats.outcomes["unparsed"],
            r429=stats.rate_limited,
            cost=cost_text(stats.cost, stats.unpriced_calls),
            refresh=False,
        )

    def note(self, message: str) -> None:
        """A remark above the bar (stderr), shown whether or not the bar is drawn."""
        from tqdm import tqdm

        tqdm.write(message, file=sys.stderr)

    def close(self) -> None:
        self._bar.close()


class WaitBar:
    """A `WaitSink`: the bar of a wait for batches, requests done out of all of theirs."""

    def __init__(self, total: int, enabled: bool | None) -> None:
        from tqdm import tqdm

        self._bar: Any = tqdm(
            total=total,
            unit="request",
            file=sys.stderr,
            dynamic_ncols=True,
            disable=(not enabled) if enabled is not None else None,
        )

    def show(self, done: int, statuses: str) -> None:
        self._bar.n = done
        self._bar.set_postfix_str(statuses, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


class Progress:
    """What a long call shows while it works: with `enabled` a bar per labelling loop and one
    while waiting for batches; None: bars on a terminal, lines every few seconds elsewhere.
    `note` hears the remarks made on the way (a batch adopted after a crash ...): dropped here,
    printed by the CLI's subclass."""

    def __init__(self, enabled: bool | None = False) -> None:
        self.enabled = enabled

    def bar(self, what: str | None, total: int) -> ProgressSink:
        """The bar of one labelling loop over `total` pairs (`what`: whose, or which pairs); the
        lines of a log when `enabled` is None and stderr is not a terminal."""
        if self.enabled is None and not _on_terminal():
            return ProgressLines(total, what)
        return ProgressBar(total, self.enabled, what)

    def waiting(self, total: int) -> WaitSink:
        """The bar of a wait for batches holding `total` requests (lines, as `bar`)."""
        if self.enabled is None and not _on_terminal():
            return WaitLines(total)
        return WaitBar(total, self.enabled)

    def note(self, message: str) -> None:
        """A remark for the person watching (the library keeps quiet)."""
