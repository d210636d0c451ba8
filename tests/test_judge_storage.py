"""What the judge stores, through the real CLI: secrets masked, long queries and answers capped,
and a cache that cannot be written never costs a paid answer (issue 11.17, 11.19).

Disk faults are real: a size-limited tmpfs that the fake provider fills in the middle of a run,
or one remounted read-only. Mounting needs root; without it those tests skip and say so.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgepool.judge.cache import JudgeCache
from judgepool.judge.provenance import RAW_OUTPUT_LIMIT
from judgepool.pooling.ingest_texts import ingest_queries
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.fake_openai import FakeOpenAI, FakeRequest, Reply, default_reply, echo_key_reply
from tests.fixtures_servers import FAKE_KEY
from tests.judge_fixtures import EXPECTED, QUERIES, collection_copy

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]
OTHER_SECRET = "bedrock-bearer-0123456789abcdef"


@pytest.fixture
def store(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Store:
    return collection_copy(tmp_path_factory, tmp_path / "test.duckdb")


def judge_args(fake: FakeOpenAI, *extra: str) -> list[str]:
    """The judge command on the fake server; canaries off (their own tests: test_canaries.py),
    so that calls count the holes' texts."""
    return [
        "judge",
        "--model",
        "openai/fake-model",
        "--api-base",
        fake.api_base,
        "--no-progress",
        "--no-canaries",
        *extra,
    ]


def labels(store: Store) -> list[dict[str, Any]]:
    with store.read() as con:
        cursor = con.execute("SELECT * FROM judgments WHERE source = 'judge' ORDER BY id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def cache_values() -> list[str]:
    with JudgeCache() as cache:
        inner = cache._cache  # diskcache.Cache: read every stored value back as text
        return [str(inner[key]) for key in inner.iterkeys()]


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A real size-limited filesystem at `where` (skips the test when it cannot be mounted)."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the filesystem of `folder` to the last byte; returns the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


def test_a_key_echoed_by_the_provider_is_stored_nowhere(
    store: Store, fake: FakeOpenAI, cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", OTHER_SECRET)  # any key litellm reads

    def reply(request: FakeRequest) -> Reply:
        echoed = echo_key_reply(request)
        if "Paris" in request.passage:  # an error message quoting the keys
            return Reply(status=500, content=f"upstream failed for {FAKE_KEY} / {OTHER_SECRET}")
        return Reply(f"{echoed.content} (also {OTHER_SECRET})")

    fake.reply = reply
    result = cli(*judge_args(fake, "--retries", "0"))
    assert result.code == 4  # Paris failed
    rows = labels(store)
    paris = next(r for r in rows if r["doc_id"] == "c10")
    assert paris["status"] == "error" and "upstream failed for *** / ***" in paris["note"]
    answered = [r for r in rows if r["status"] == "ok"]
    assert answered and all("Request authorised with key ***" in r["raw_output"] for r in answered)
    # the key did reach the server, so finding it nowhere below means something
    assert {q.headers.get("authorization") for q in fake.requests} == {f"Bearer {FAKE_KEY}"}
    stored = [json.dumps(r, default=str) for r in rows] + cache_values()
    for secret in (FAKE_KEY, OTHER_SECRET):
        assert not any(secret in text for text in stored), secret
        assert secret not in result.out + result.err
    assert "upstream failed for *** / ***" in result.out  # the summary's reason, masked
    key = FAKE_KEY.encode()
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert key not in path.read_bytes(), path


def test_a_huge_query_is_cut_and_flagged(
    store: Store, fake: FakeOpenAI, cli: Cli, write: Writer
) -> None:
    huge = "what is the boiling point of water " + "and why " * 130_000  # about 1 MB
    ingest_queries(
        store, write("huge.tsv", QUERIES.replace("what is the boiling point of water", huge))
    )
    result = cli(*judge_args(fake, "--query-tokens", "64", "--dry-run"))
    assert result.code == 0, result.err
    assert (
        next(
            line for line in result.out.splitlines() if line.startswith("truncated queries")
        ).split()[2]
        == "5"
    )  # q1's pairs
    result = cli(*judge_args(fake, "--query-tokens", "64"))
    assert result.code == 0, result.err
    longest = max(len(r.prompt) for r in fake.requests)
    assert longest < 10_000  # not a megabyte
    for row in labels(store):
        provenance = json.loads(row["provenance"])
        if row["status"] == "ok":
            assert provenance["query_truncated"] is (row["qid"] == "q1")
    default = cli(*judge_args(fake, "--dry-run"))
    assert "truncated queries" in default.out  # the default cap (1024 tokens) applies too


def test_a_long_answer_is_parsed_whole_and_stored_capped(
    store: Store, fake: FakeOpenAI, cli: Cli
) -> None:
    def reply(request: FakeRequest) -> Reply:
        graded = default_reply(request).content or ""
        return Reply("Let me think. " * 10_000 + graded)  # 140 kB of reasoning, grade at the end

    fake.reply = reply
    result = cli(*judge_args(fake))
    assert result.code == 0, result.err
    rows = [r for r in labels(store) if r["status"] == "ok"]
    assert {r["doc_id"]: r["grade"] for r in rows} == EXPECTED
    for row in rows:
        assert len(row["raw_output"]) <= RAW_OUTPUT_LIMIT
        assert row["raw_output"].startswith("Let me think.")
        assert row["raw_output"].endswith(f"##final score: {EXPECTED[row['doc_id']]}")
        assert "characters in all; the middle was not stored" in row["raw_output"]
        cut = json.loads(row["provenance"])["answer"]["raw_output_cut"]
        assert cut["chars"] > 140_000 and cut["kept"] == RAW_OUTPUT_LIMIT
    assert all(len(v) < 4 * RAW_OUTPUT_LIMIT for v in cache_values())


def test_an_unwritable_cache_folder_says_what_to_do(
    store: Store, fake: FakeOpenAI, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tmpfs(tmp_path / "ro", "1m") as mount:
        (mount / "judge").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(mount))
        for extra in ((), ("--dry-run",)):
            result = cli(*judge_args(fake, *extra))
            assert result.code == 1
            assert "bug" not in result.err
            assert f"error: cannot open the judge cache at {mount / 'judge'}" in result.err
            assert "not writable, or its disk is read-only" in result.err
            assert "make that folder writable" in result.err and "JUDGEPOOL_CACHE_DIR" in result.err
    assert fake.calls == 0


def test_a_cache_that_fills_mid_run_loses_no_paid_answer(
    store: Store, fake: FakeOpenAI, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tmpfs(tmp_path / "small", "2m") as mount:
        monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(mount))
        filler: list[Path] = []

        def reply(request: FakeRequest) -> Reply:
            if fake.calls == 3 and not filler:  # the disk fills while the third call runs
                filler.append(fill(mount))
            return default_reply(request)

        fake.reply = reply
        result = cli(*judge_args(fake, "--concurrency", "1"))
        assert fake.calls == 3  # no call after the cache failed
        assert result.code == 1
        line = next(x for x in result.err.splitlines() if x.startswith("error: "))
        assert "the judge cache at" in line and "database or disk is full" in line
        assert "every answer received was written to the database" in line
        assert "free space on that disk" in line and "bug" not in line
        paid = [r for r in labels(store) if r["status"] == "ok"]
        assert len(paid) == fake.statuses[200] == 3  # the third answer too, though not cached
        filler[0].unlink()
        again = cli(*judge_args(fake))
        assert again.code == 0, again.err
    assert fake.calls == 6  # the answer the cache missed was not paid again
    ok = [(r["doc_id"], r["grade"]) for r in labels(store) if r["status"] == "ok"]
    assert dict(ok) == EXPECTED and Counter(d for d, _ in ok).most_common(1)[0][1] == 1


def test_a_database_that_fills_mid_run_stops_with_the_answers_in_the_cache(
    tmp_path_factory: pytest.TempPathFactory,
    fake: FakeOpenAI,
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with tmpfs(tmp_path / "dbdisk", "8m") as mount:
        store = collection_copy(tmp_path_factory, mount / "test.duckdb")
        monkeypatch.setenv("JUDGEPOOL_DB", str(store.path))
        filler: list[Path] = []

        def reply(request: FakeRequest) -> Reply:
            if fake.calls == 3 and not filler:
                filler.append(fill(mount))
            return default_reply(request)

        fake.reply = reply
        result = cli(*judge_args(fake, "--concurrency", "1"))
        assert result.code == 1
        assert "bug" not in result.err
        line = next(x for x in result.err.splitlines() if x.startswith("error: "))
        assert f"cannot write to the database {store.path}" in line
        assert "free space on its disk" in line and "come back from the judge cache" in line
        # Calls go on until the judge's next write finds the disk full (labels, claims and
        # renewals share one transaction per 0.5 s flush, issue 23.3: here up to every text,
        # where a claim written before each call used to stop it at the 4th); each one is paid
        # once and cached, so the run below pays for nothing more (fake.calls == 6 at the end).
        answered = fake.statuses[200]
        assert 3 <= answered <= 6
        with JudgeCache() as cache:
            assert len(cache) == answered  # every paid answer is in the cache
        filler[0].unlink()
        again = cli(*judge_args(fake))  # the claims the full disk kept are known dead: no wait
        assert again.code == 0, again.err
        assert "waiting for" not in again.err and "pairs were taken over" in again.out
        ok = [(r["doc_id"], r["grade"]) for r in labels(store) if r["status"] == "ok"]
    assert fake.calls == 6  # what the database missed came back from the cache, unpaid
    assert dict(ok) == EXPECTED and Counter(d for d, _ in ok).most_common(1)[0][1] == 1
