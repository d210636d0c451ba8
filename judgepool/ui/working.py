"""A line on stderr while a long step works: once it has taken a few seconds, then every few
seconds, `computing the bootstrap intervals (10,000 resamples): 8 s so far`. Issue 24: on TREC
DL a command could sit silent for a long while; a person (or a CI log) should see what it is
doing. Steps that report their own progress (the judge) do not need it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from judgepool.api.progress import clock, line_every

#: Seconds before the first line: a step quicker than this says nothing.
FIRST_AFTER_S = 3.0


@contextmanager
def working(what: str, first_after: float = FIRST_AFTER_S) -> Iterator[None]:
    """Say `what: N s so far` on stderr after `first_after` seconds, then every few seconds
    (JUDGEPOOL_PROGRESS_EVERY), until the block ends."""
    stop = threading.Event()
    started = time.monotonic()

    def tell() -> None:
        wait = first_after
        while not stop.wait(wait):
            click.echo(f"{what}: {clock(time.monotonic() - started)} so far", err=True)
            wait = line_every()

    teller = threading.Thread(target=tell, name="judgepool-working", daemon=True)
    teller.start()
    try:
        yield
    finally:
        stop.set()
        teller.join()
