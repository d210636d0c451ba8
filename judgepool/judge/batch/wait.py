"""`--wait`: poll open batches until the provider finishes them, showing request_counts.

The caller's `WaitSink` (a bar on stderr: api/progress.py) is told the requests the provider
reports done (completed + failed) out of all the batches' requests. Polls are spaced `poll`
seconds apart: one retrieve per open batch per poll.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from judgepool.judge.batch.send import Clients, progress_of
from judgepool.pooling.store import batches
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from collections.abc import Sequence


class WaitSink(Protocol):
    """Something that shows the wait (api/progress.py's bar): requests done, and the statuses."""

    def show(self, done: int, statuses: str) -> None: ...

    def close(self) -> None: ...


def _shown(rows: Sequence[batches.BatchRow]) -> tuple[int, str]:
    done = sum(r.completed + r.failed for r in rows)
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    return done, ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))


async def wait_for(
    store: Store,
    clients: Clients,
    rows: list[batches.BatchRow],
    poll: float,
    bar: WaitSink | None = None,
) -> list[batches.BatchRow]:
    """Poll `rows` (batches the provider has) until each has finished; returns them as they
    are recorded then."""
    current = {r.local_id: r for r in rows}
    while True:
        open_rows = [r for r in current.values() if not r.finished]
        if bar is not None:
            bar.show(*_shown(list(current.values())))
        if not open_rows:
            return list(current.values())
        await asyncio.sleep(poll)
        for row in open_rows:
            if row.batch_id is None:  # pragma: no cover - callers pass created batches only
                continue
            status = await clients.of(row).retrieve(row.batch_id)
            batches.record_progress(store, row.local_id, progress_of(status))
            found = batches.find(store, row.local_id)
            if found is not None:
                current[row.local_id] = found
