"""The environment a benchmarked `judgepool` command runs in: a user's, with bytecode cached.

An installed package has its modules compiled to bytecode (pip does it at install, Python on the
first import); under PYTHONDONTWRITEBYTECODE=1 (some containers set it) every judgepool module is
compiled from source at every start, about 0.1 s of CPU that no user pays. The start-up benchmarks
therefore run their commands without it: the first (warm-up) run writes the caches into the
ignored __pycache__ folders and the timed runs read them.
"""

from __future__ import annotations

import os


def user_env(**extra: str) -> dict[str, str]:
    """os.environ with bytecode caching allowed, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}
