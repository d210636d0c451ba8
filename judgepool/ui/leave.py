"""Ending the `judgepool` process once a command is done, without the interpreter's teardown.

When a command returns, what it wrote is flushed and closed and its database released; what is
left is the interpreter taking apart every module and object one by one (after an ingest,
DuckDB's engine and every Arrow buffer the parse made): 0.1-0.2 s for nothing, since the
process ends anyway. The console script therefore flushes its output, runs the atexit
handlers and ends the process at once.

It does so only when nothing could be lost: when the main thread is the last one (a thread
still running is left to the normal exit, which waits for it), when the exit status is a number,
and when standard output flushes (a full disk behind it takes the normal exit, which reports
it). A caller that runs the CLI inside its own process (`main(argv)`: tests, scripts) always
gets the normal `SystemExit`.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def leave(code: str | int | None) -> NoReturn:
    """Exit the process with `code` (as `sys.exit` takes it), skipping the teardown when safe."""
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if isinstance(code, str) or threading.active_count() > 1 or run_handlers is None:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)  # the normal exit says what went wrong with the output
    run_handlers()
    try:
        sys.stdout.flush()  # what the handlers printed
        sys.stderr.flush()
    except (OSError, ValueError):
        os._exit(code or 1)
    os._exit(code or 0)
