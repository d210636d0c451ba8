"""The user's environment is not a bug: disk full, permission denied, read-only file system
(issue 11.17). Before, each printed 'unexpected ... this is a bug in judgepool'.

Real faults, not patched code: a full device (/dev/full, or a 256 kB tmpfs in a private mount
namespace), a folder this process may not write (root drops CAP_DAC_OVERRIDE with setpriv), a
read-only bind mount. Tests that need a facility the machine lacks skip and say which.
"""

from __future__ import annotations

import errno
import os
import random
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store

Writer = Callable[[str, str | bytes], Path]
DROP_CAPS = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]


def judgepool(
    *args: str, stdout: int | None = None, prefix: tuple[str, ...] = ()
) -> tuple[int, str]:
    """Run the real command in a child process; returns (exit code, stderr)."""
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "judgepool.ui.cli", *args],
        stdout=stdout if stdout is not None else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return done.returncode, done.stderr


def said_what_to_do(err: str, *problem: str) -> None:
    assert "bug" not in err and "Traceback" not in err, err
    (line,) = [x for x in err.splitlines() if x.startswith("error: ")]
    what, fix = line.split(" — ", 1)
    for part in problem:
        assert part in what, err
    assert fix, err


def unprivileged() -> tuple[str, ...]:
    """A prefix that makes permission checks apply to this process's children."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions would not apply")
    probe = subprocess.run([*DROP_CAPS, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr!r}")
    return tuple(DROP_CAPS)


def private_mounts() -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare to mount a small file system for this test")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a private mount namespace here: {probe.stderr!r}")


def test_disk_full_on_standard_output(store: Store) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    with open("/dev/full", "w") as full:
        code, err = judgepool("export", "qrels", stdout=full.fileno())
    assert code != 0
    said_what_to_do(err, "no space left", "standard output")
    with open("/dev/full", "w") as full:
        code, err = judgepool("eval", "--format", "json", "--resamples", "20", stdout=full.fileno())
    assert code != 0
    said_what_to_do(err, "no space left")


def test_permission_denied_writing_a_file(store: Store, tmp_path: Path) -> None:
    prefix = unprivileged()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    code, err = judgepool("export", "qrels", "-o", str(locked / "q.txt"), prefix=prefix)
    assert code != 0
    said_what_to_do(err, "permission denied", str(locked))
    assert list(locked.iterdir()) == []


def test_permission_denied_on_the_database(store: Store) -> None:
    prefix = unprivileged()
    store.path.chmod(0o000)
    try:
        code, err = judgepool("status", prefix=prefix)
    finally:
        store.path.chmod(0o644)
    assert code != 0
    said_what_to_do(err, "permission denied", str(store.path))


@pytest.mark.parametrize("queries", [60, 200])
def test_database_on_a_full_disk(tmp_path: Path, write: Writer, queries: int) -> None:
    """The disk fills while a run is written. With 200,000 rows it fills in the middle of the
    insert, where the aborted transaction made every later statement fail too: the cleanup's
    error (unregistering the rows, resetting a setting) was reported as a bug instead."""
    private_mounts()
    disk = tmp_path / "disk"
    disk.mkdir()
    rows = "".join(
        f"q{q} Q0 doc-{q}-{d}-{'x' * 40} {d + 1} {1000 - d} big\n"
        for q in range(queries)
        for d in range(1000)
    )
    ((code, err),) = _on_a_small_disk(
        disk, [f"--db {disk / 'eval.duckdb'} ingest run {write('big.trec', rows)}"]
    )
    assert code == 1
    said_what_to_do(err, "no space left", f"{disk}/eval.duckdb", f"tmpfs mounted at {disk}")


def _on_a_small_disk(disk: Path, commands: list[str]) -> list[tuple[int, str]]:
    """Run each `judgepool ...` command line (shell words) with a 256 kB tmpfs at `disk`."""
    script = f"mount -t tmpfs -o size=256k tmpfs {disk}"
    for i, command in enumerate(commands):
        script += f"; {sys.executable} -m judgepool.ui.cli {command} 2>{disk.parent}/err{i}"
        script += f"; echo $? >{disk.parent}/rc{i}"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    folder = disk.parent
    return [
        (int((folder / f"rc{i}").read_text()), (folder / f"err{i}").read_text())
        for i in range(len(commands))
    ]


def test_a_full_disk_names_the_file_and_the_device_that_filled(
    store: Store, tmp_path: Path, write: Writer
) -> None:
    """Issue 22.6: the database's disk filled while staging passages (pyarrow names no file)
    and an export filled its disk (a file object names none): each said "no space left on the
    device of standard output" while standard output was a pipe with room."""
    private_mounts()
    disk = tmp_path / "disk"
    disk.mkdir()
    rng = random.Random(7)  # text that does not compress: the staged Parquet fills the disk
    docs = write(
        "docs.jsonl",
        "".join(
            f'{{"doc_id": "d{i}", "text": "{rng.randbytes(150).hex()}"}}\n' for i in range(3000)
        ),
    )
    qrels = write("big-qrels.txt", "".join(f"q{i} 0 d{i}-{'x' * 60} 1\n" for i in range(8000)))
    assert (
        subprocess.run(
            [sys.executable, "-m", "judgepool.ui.cli", "ingest", "qrels", str(qrels)],
            capture_output=True,
        ).returncode
        == 0
    )
    (docs_code, docs_err), (export_code, export_err), (out_code, out_err) = _on_a_small_disk(
        disk,
        [
            f"--db {disk / 'eval.duckdb'} ingest docs {docs}",
            f"--db {store.path} export qrels -o {disk / 'qrels-out.txt'}",
            f"--db {store.path} export qrels >{disk / 'redirected.txt'}",
        ],
    )
    device = f"tmpfs mounted at {disk}: 262.1 kB"
    assert docs_code == 1 and "standard output" not in docs_err
    said_what_to_do(docs_err, "no space left on the device of", f"{disk}/", device)
    assert export_code == 1 and "standard output" not in export_err
    said_what_to_do(export_err, f"device of {disk / 'qrels-out.txt'}", device)
    # Standard output is named when it is the one on the full disk, with its file.
    assert out_code == 1
    said_what_to_do(out_err, "device of standard output", str(disk / "redirected.txt"), device)


def test_a_full_disk_that_names_no_file_blames_no_one_by_mistake(tmp_path: Path) -> None:
    """An ENOSPC that names no file, with standard output a pipe with room: judgepool says
    the system named no file and gives the database's device, instead of "standard output"."""
    from judgepool.host import host_error

    database = tmp_path / "eval.duckdb"
    read_end, write_end = os.pipe()
    saved = os.dup(1)
    try:
        os.dup2(write_end, 1)
        found = host_error(OSError(errno.ENOSPC, "No space left on device"), places=[database])
    finally:
        os.dup2(saved, 1)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert found is not None
    assert "standard output" in found.what and "not on a full disk" in found.what
    assert "a file the system did not name" in found.what
    assert f"the database {database} is on " in found.what and " free now" in found.what


def test_read_only_file_system(store: Store, tmp_path: Path) -> None:
    private_mounts()
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    script = (
        f"mount --bind {shelf} {shelf} && mount -o remount,bind,ro {shelf} && "
        f"{sys.executable} -m judgepool.ui.cli --db {store.path} export qrels -o {shelf / 'q.txt'}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0, done.stderr
    said_what_to_do(done.stderr, "read-only file system")


def test_a_closed_pipe_is_not_a_bug(store: Store) -> None:
    """`judgepool export qrels | head -0`: the reader is gone before we write; no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        code, err = judgepool("export", "qrels", stdout=write_end)
    finally:
        os.close(write_end)
    assert code != 0
    assert "bug" not in err and "Traceback" not in err and "Exception" not in err, err


def test_a_full_disk_under_the_offline_judges_cache_is_no_bug(tmp_path: Path) -> None:
    """The demo on a nearly full disk: storing the offline judge's embeddings failed with
    SQLite's "database or disk is full", reported as "a bug in judgepool"."""
    private_mounts()
    disk = tmp_path / "disk"
    disk.mkdir()
    code = (
        "import numpy as np\n"
        "from judgepool.host import host_error\n"
        "from judgepool.judge.offline.embeddings import EmbeddingCache\n"
        f"cache = EmbeddingCache({str(disk / 'emb')!r})\n"
        "rows = {f'h{i}': np.ones(384, dtype=np.float32) * i for i in range(2000)}\n"
        "try:\n"
        "    cache.store('m', rows)\n"
        "except OSError as err:\n"
        "    print(host_error(err))\n"
    )
    script = f"mount -t tmpfs -o size=256k tmpfs {disk} && {sys.executable} -c {shlex.quote(code)}"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert said.startswith(f"disk full: no space left on the device of {disk / 'emb'} (tmpfs"), said


def test_sqlites_full_disk_is_said_as_a_full_disk(tmp_path: Path) -> None:
    import sqlite3

    from judgepool.host import host_error

    found = host_error(sqlite3.OperationalError("database or disk is full"), places=[tmp_path])
    assert found is not None and found.what.startswith("disk full: no space left on the device")
