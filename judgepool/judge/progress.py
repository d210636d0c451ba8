"""The progress bar of a labelling run: done/total, cache hits, failures, 429s, cost, ETA (stderr).

tqdm draws it on stderr (stdout stays for results) and only on a terminal, unless forced; the
ETA is tqdm's, from the pairs finished so far (cache hits arrive first and fast, so the ETA
settles once calls dominate).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgepool.judge.loop import LoopStats


def cost_text(cost: float, unpriced_calls: int) -> str:
    """$0.0123, or 'unknown' / '$0.0123 + unknown' when some calls have no known price."""
    if unpriced_calls and cost == 0:
        return "unknown"
    text = f"${cost:.4f}"
    return f"{text} + unknown" if unpriced_calls else text


class ProgressBar:
    """A `ProgressSink` drawing a tqdm bar."""

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
