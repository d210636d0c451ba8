"""A real `judgepool judge` writing to a test database, its answers held mid-backfill.

`held_judge` starts the fake provider (tests/fake_openai.py) with a reply that answers the first
`answered` calls at once and holds every later one until `release()`, then the real judge (its own
process, litellm, claims, batched writes) on the database. It yields once those first labels are
in the database and the judge holds its claims: the state a dashboard must show as "labels being
written". Used by tests/test_dashboard_live.py (AppTest and headless Chromium).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from judgepool.pooling.store.activity import activity
from judgepool.pooling.store.connection import Store
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply

REPO = Path(__file__).resolve().parent.parent
MODEL = "openai/fake-model"


@dataclass
class HeldJudge:
    """The running judge and the switch that lets its held answers go."""

    process: subprocess.Popen[str]
    gate: threading.Event
    store: Store

    def release(self) -> None:
        """Answer every held call and the rest at once."""
        self.gate.set()

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Release, wait for the judge to end; (exit code, stderr)."""
        self.release()
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err


def judge_labels(store: Store) -> int:
    """Labels the fake model's judge has written so far."""
    with store.read() as con:
        row = con.execute(
            "SELECT count(*) FROM judgments WHERE labeller LIKE ?", [f"{MODEL}%"]
        ).fetchone()
    return int(row[0]) if row else 0


def _wait(condition: Callable[[], object], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen in {timeout} s")
        time.sleep(0.1)


@contextmanager
def held_judge(db: Path, answered: int = 5, timeout: float = 60) -> Iterator[HeldJudge]:
    """See the module docstring; the judge is killed on exit if it is still running."""
    gate = threading.Event()
    calls = {"n": 0}
    lock = threading.Lock()

    def reply(request: FakeRequest) -> Reply:
        with lock:
            calls["n"] += 1
            held = calls["n"] > answered
        if held:
            gate.wait(timeout)
        return default_reply(request)

    store = Store(db)
    with FakeOpenAI(reply=reply) as fake:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-key"}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "judgepool.ui.cli",
                "--db",
                str(db),
                "judge",
                "--model",
                MODEL,
                "--api-base",
                fake.api_base,
                "--concurrency",
                "2",
                "--no-canaries",  # the holes only: the banner counts them
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        judge = HeldJudge(process, gate, store)
        try:
            _wait(
                lambda: (
                    process.poll() is not None
                    or (judge_labels(store) >= answered and activity(store).judges)
                ),
                f"{answered} labels written by a judge holding claims",
                timeout,
            )
            if process.poll() is not None:
                raise RuntimeError(f"the judge ended early: {process.communicate()[1]}")
            yield judge
        finally:
            gate.set()
            if process.poll() is None:
                process.kill()
            process.communicate()
