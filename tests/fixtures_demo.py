"""Fixture: `judgepool demo` run once per test session, as README runs it, for the tests that
read a demo run (its story, README's transcript of it, README's library session on its data).

The demo takes a minute or more on two cores, most of it the offline judge embedding the
collection's 985 texts. Under pytest-xdist each worker is a process with its own session
fixtures, so the first worker to ask claims the run (a file created exclusively in the folder
all workers share) and the others wait for its result: one run for the whole session, whichever
workers the tests land on (xdist's own `xdist_group` does not group under pytest 9.2).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.scripts import script

TRANSCRIPT = REPO / "docs" / "demo_transcript.py"
WAIT_S = 1800  # the demo's own time limit in docs/demo_transcript.py


@dataclass(frozen=True)
class DemoRun:
    """One `judgepool demo` as README runs it: the folder it ran in and what it printed."""

    folder: str
    code: int
    out: str
    err: str

    @property
    def db(self) -> Path:
        """The demo database the run built and left (the one `judgepool ui` would open)."""
        from judgepool.ui.commands.demo import DEMO_DB

        return Path(self.folder) / DEMO_DB

    @property
    def embeddings(self) -> Path:
        """The offline judge's embedding cache the run filled (beside its database)."""
        return Path(f"{self.db}.cache") / "offline-embeddings"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The demo run is the slow suite's longest chain (the run, about 1.5 min on two workers,
    then README's session from its cache): the first test that asks for it goes first, so the
    run starts at once, and the others that read it go last, so no worker sits waiting for it
    while other tests are left. Every worker sorts the same collection the same way."""
    readers = [item for item in items if "demo_run" in getattr(item, "fixturenames", ())]
    if not readers:
        return
    first, rest = readers[0], set(readers[1:])
    items[:] = [first, *(i for i in items if i is not first and i not in rest), *readers[1:]]


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session sees (the parent of a worker's own basetemp)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _wait_for(result: Path, claim: Path) -> DemoRun:
    deadline = time.monotonic() + WAIT_S
    while not result.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no demo result at {result} after {WAIT_S} s (claimed: {claim})")
        time.sleep(0.5)
    return DemoRun(**json.loads(result.read_text(encoding="utf-8")))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo, run once per session in a folder of its own by docs/demo_transcript.py (the
    code that checks README's transcript), with what it wrote left there."""
    root = _shared_root(tmp_path_factory)
    claim, result = root / "demo-run.claim", root / "demo-run.json"
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # another worker runs it
        return _wait_for(result, claim)
    folder = root / "demo-run"
    folder.mkdir()
    done = script(TRANSCRIPT).demo_process(folder)
    run = DemoRun(str(folder), done.returncode, done.stdout, done.stderr)
    partial = result.with_suffix(".tmp")
    partial.write_text(json.dumps(asdict(run)), encoding="utf-8")
    partial.replace(result)  # whole or absent: a waiting worker never reads half of it
    return run
