"""A `judgepool judge --batch...` process killed (-9) at the worst moments, then rerun (issue 14).

The killed process is a real `judgepool` subprocess; the fake batch server runs in this process
and holds back its answer to one request (`FakeBatchAPI.hold`) until the process is dead, so
the kill lands exactly between the provider acting and the process recording it. The rerun must
upload nothing twice, create no second batch, and label every hole once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.pooling.store import batches
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai_batch import FakeBatchAPI
from tests.judge_fixtures import EXPECTED, collection_copy
from tests.test_batch_judge import FAKE_KEY, MODEL, batch, claim_holders, labels

Cli = Callable[..., CliResult]


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBatchAPI]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with FakeBatchAPI() as server:
        yield server


def killed_at(fake: FakeBatchAPI, route: str, *args: str) -> None:
    """Run `judgepool ARGS` in a subprocess and kill -9 it while the server holds its answer
    to the next `route` request (the server has acted on it: a file stored, a batch made)."""
    reached, release = fake.hold(route)
    process = subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", *batch(fake, *args), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        if not reached.wait(90):
            process.kill()
            pytest.fail(f"no {route} request came: {process.communicate()}")
        process.kill()
        process.communicate(timeout=30)
        assert process.returncode == -9
    finally:
        release.set()


@pytest.mark.slow
def test_a_kill_after_the_batch_was_created_and_before_it_was_recorded(
    store: Store, fake: FakeBatchAPI, cli: Cli
) -> None:
    killed_at(fake, "create", "--batch")
    assert fake.counts == Counter(upload=1, create=1)  # the provider has the batch
    (row,) = batches.list_batches(store)
    assert row.status == batches.SUBMITTING and row.batch_id is None and row.input_file_id
    created = next(iter(fake.batches.values()))
    assert created.metadata == {"judgepool_intent": row.local_id, "judgepool_file": row.file_sha256}
    again = cli(*batch(fake, "--batch"))
    assert again.code == 0, again.err
    assert (
        f"found batch {created.id} (validating), which a stopped judgepool had created" in again.err
    )
    assert "nothing sent" in again.out
    assert fake.counts == Counter(upload=1, create=1, list=1)  # found it: nothing sent again
    assert claim_holders(store) == Counter({f"batch:{created.id}": 6})
    done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
    assert done.code == 0, done.err
    assert fake.counts == Counter(upload=1, create=1, list=1, retrieve=3, content=1)
    ok = [(d, g) for d, s, g, _, _ in labels(store) if s == "ok"]
    assert dict(ok) == EXPECTED and len(ok) == 7  # every hole labelled once


@pytest.mark.slow
def test_a_kill_after_the_upload_and_before_it_was_recorded_uploads_nothing_twice(
    store: Store, fake: FakeBatchAPI, cli: Cli
) -> None:
    killed_at(fake, "upload", "--batch")
    assert fake.counts == Counter(upload=1)
    (row,) = batches.list_batches(store)
    assert row.input_file_id is None and claim_holders(store) == Counter(
        {f"batch:{row.local_id}": 6}
    )
    again = cli(*batch(fake, "--batch"))
    assert again.code == 0, again.err
    assert "planned again what a stopped judgepool had recorded but not sent (1 batch" in again.err
    assert "uploading" not in again.err  # the file was found among the provider's files
    # looked for a batch (none), then for the file (found), then created the batch
    assert fake.counts == Counter(upload=1, list=1, files=1, create=1)
    (sent,) = batches.list_batches(store)
    assert sent.batch_id is not None and sent.local_id != row.local_id
    assert sent.input_file_id == next(iter(fake.files))
    done = cli(*batch(fake, "--batch-collect", "--wait", "--poll", "0.01"))
    assert done.code == 0, done.err
    ok = [(d, g) for d, s, g, _, _ in labels(store) if s == "ok"]
    assert dict(ok) == EXPECTED and len(ok) == 7


@pytest.mark.slow
def test_a_kill_between_downloading_the_answers_and_writing_them_loses_nothing(
    store: Store, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with FakeBatchAPI(polls_validating=0, polls_in_progress=0) as fake:
        assert cli(*batch(fake, "--batch")).code == 0
        reached, release = fake.hold("content")
        process = subprocess.Popen(
            [sys.executable, "-m", "judgepool.ui.cli", *batch(fake, "--batch-collect")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        try:
            assert reached.wait(90), process.communicate()
            # hold the database: the collector gets its answers and caches them, then waits
            # to write the labels; it is killed there
            lock = duckdb.connect(str(store.path))
            release.set()
            deadline = time.monotonic() + 60
            while True:
                with JudgeCache() as cache:
                    if len(cache) == 6:
                        break
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
            process.kill()
            process.communicate(timeout=30)
            lock.close()
        finally:
            release.set()
        assert fake.counts == Counter(upload=1, create=1, retrieve=1, content=1)
        assert [s for _, s, _, _, _ in labels(store)] == ["no_text"]  # nothing half-written
        (row,) = batches.list_batches(store)
        assert row.collected_at is None and row.status == "completed"
        done = cli(*batch(fake, "--batch-collect"))
        assert done.code == 0, done.err
        assert fake.counts == Counter(upload=1, create=1, retrieve=1, content=2)
        again = cli(*batch(fake, "--batch-collect"))
        assert "nothing to collect" in again.out
        assert fake.counts == Counter(upload=1, create=1, retrieve=1, content=2)
    ok = [(d, g) for d, s, g, _, _ in labels(store) if s == "ok"]
    assert dict(ok) == EXPECTED and len(ok) == 7
    assert claim_holders(store) == Counter()
    assert MODEL in row.labeller
