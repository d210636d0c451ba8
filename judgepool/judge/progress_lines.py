"""Progress said as lines in a log (CI, a pipe, `nohup`), where a bar cannot be drawn: how often,
and how a duration reads. A line every few seconds shows that a long stage is alive and how far
it is (issue 24: the offline judge on TREC DL 2019 said nothing for 12 minutes).

Used by api/progress.py (the labelling loop's lines, the wait for batches) and by the offline
judge's preparation (the model's load and the embedding of every text).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

#: Seconds between two progress lines ($JUDGEPOOL_PROGRESS_EVERY overrides it).
LINE_EVERY_S = 5.0
ENV_EVERY = "JUDGEPOOL_PROGRESS_EVERY"


def line_every() -> float:
    """$JUDGEPOOL_PROGRESS_EVERY (seconds, > 0), else `LINE_EVERY_S`."""
    try:
        found = float(os.environ.get(ENV_EVERY, ""))
    except ValueError:
        return LINE_EVERY_S
    return found if found > 0 else LINE_EVERY_S


def clock(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def so_far(started: float, done: int, total: int, pace: tuple[float, int] | None = None) -> str:
    """`14 s so far, about 28 s left`: the rest at the pace since `pace` (a time and what was
    done then; default: since `started`, nothing done), said once some is done."""
    now = time.monotonic()
    since, done_then = pace if pace is not None else (started, 0)
    text = f"{clock(now - started)} so far"
    if done_then < done < total:
        text += f", about {clock((now - since) / (done - done_then) * (total - done))} left"
    return text


def ticker(note: Callable[[str], None], what: str, unit: str) -> Callable[[int, int], None]:
    """A `progress(done, total)` that says `what: done of total unit (n %); ... so far` to
    `note` at the start (once there is work), then every `line_every()` seconds, and at the end
    when the whole took longer than that."""
    every = line_every()
    started = time.monotonic()
    last: list[float] = []

    def tell(done: int, total: int) -> None:
        now = time.monotonic()
        first, finished = not last, done >= total
        if not (first or finished or now - last[-1] >= every):
            return
        if finished and (first or now - started < every):
            return
        last.append(now)
        share = f" ({100 * done / total:.0f} %)" if total else ""
        note(f"{what}: {done} of {total} {unit}{share}; {so_far(started, done, total)}")

    return tell
