"""`--wait`: poll open batches until the provider finishes them, with a bar from request_counts.

The bar (stderr, tqdm; drawn only on a terminal unless forced) counts the requests the
provider reports done (completed + failed) out of all the batches' requests. Polls are spaced
`poll` seconds apart: one retrieve per open batch per poll.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from judgepool.judge.batch.send import Clients, progress_of
from judgepool.pooling.store import batches
from judgepool.pooling.store.connection import Store

if TYPE_CHECKING:
    from collections.abc import Sequence


class WaitBar:
    """The progress bar of `--wait` (disabled unless `enabled`, or None: when on a terminal)."""

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
    bar: WaitBar | None = None,
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
