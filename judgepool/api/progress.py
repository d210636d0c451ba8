"""How a long call shows its progress: a bar per labelling loop (done/total, cache hits, failures,
429s, cost, ETA) and one while batches run, drawn by tqdm on stderr (stdout stays for results)
and only on a terminal unless forced.

The judge draws nothing: it reports through judge/loop_state.py's `ProgressSink` and
judge/batch/wait.py's `WaitSink`, and whoever calls the service hands it a `Progress` that makes
them (`jp.Database`'s `progress=True`, and the CLI, which also prints the notes). The ETA is
tqdm's, from the pairs finished so far (cache hits arrive first and fast, so it settles once
calls dominate).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    """What a long call shows while it works: with `enabled` (None: when stderr is a terminal) a
    bar per labelling loop and one while waiting for batches. `note` hears the remarks made on
    the way (a batch adopted after a crash ...): dropped here, printed by the CLI's subclass."""

    def __init__(self, enabled: bool | None = False) -> None:
        self.enabled = enabled

    def bar(self, what: str | None, total: int) -> ProgressSink:
        """The bar of one labelling loop over `total` pairs (`what`: whose, or which pairs)."""
        return ProgressBar(total, self.enabled, what)

    def waiting(self, total: int) -> WaitSink:
        """The bar of a wait for batches holding `total` requests."""
        return WaitBar(total, self.enabled)

    def note(self, message: str) -> None:
        """A remark for the person watching (the library keeps quiet)."""
