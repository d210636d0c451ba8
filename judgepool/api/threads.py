"""Library calls that work inside a running event loop (Jupyter): the work runs on a thread of
its own there, and the call waits for it (asyncio.run cannot start inside a running loop)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def off_loop(work: Callable[[], T]) -> T:
    """`work()`, on a thread of its own when this thread runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    found: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            found.append(work())
        except BaseException as err:  # handed back to the caller's thread below
            failed.append(err)

    worker = threading.Thread(target=run, name="judgepool-worker")
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return found[0]
