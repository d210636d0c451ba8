"""`export qrels -o PATH` never replaces what it was not asked to write (issue 11.1).

Before, `-o` onto the database replaced it with 880 bytes of qrels (exit 0), and a symlink or a
device node became a regular file. Now the database, any DuckDB file (told by its magic bytes,
whatever its name), a folder, a symlink, a device, a named pipe or a socket are refused with
what to do, and nothing is changed; a regular file is replaced atomically.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(cli: Cli, target: str | Path, *why: str) -> CliResult:
    done = cli("export", "qrels", "-o", str(target))
    assert done.code == 2, (done.code, done.err)
    line = done.err.strip()
    assert line.startswith("error: ") and line.count("\n") == 0, done.err
    problem, fix = line.split(" — ", 1)
    for part in why:
        assert part in problem, done.err
    assert fix, done.err
    return done


def test_the_database_itself_is_refused_and_left_intact(store: Store, cli: Cli) -> None:
    before = digest(store.path)
    done = refused(cli, store.path, "is the database judgepool works on")
    assert "choose another file" in done.err
    assert digest(store.path) == before
    assert cli("status").code == 0
    # The same file by another path (relative, through a folder, a hard link) too.
    refused(cli, Path(os.path.relpath(store.path)), "is the database")
    os.link(store.path, "alias.txt")
    refused(cli, "alias.txt", "is the database")
    assert digest(store.path) == before


def test_its_write_ahead_log_is_refused(store: Store, cli: Cli) -> None:
    refused(cli, f"{store.path}.wal", "write-ahead log of the database")
    assert not Path(f"{store.path}.wal").exists()


def test_any_duckdb_file_is_refused_whatever_its_name(store: Store, cli: Cli) -> None:
    import duckdb

    other = Path("notes.txt")
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE mine AS SELECT 42 AS answer")
    con.close()
    before = digest(other)
    refused(cli, other, "is a DuckDB database")
    assert digest(other) == before


def test_a_folder_is_refused(store: Store, cli: Cli) -> None:
    Path("out").mkdir()
    done = refused(cli, "out", "is a folder")
    assert "out/qrels.txt" in done.err
    assert Path("out").is_dir() and not any(Path("out").iterdir())


def test_a_symlink_is_refused_and_stays_a_link(store: Store, cli: Cli) -> None:
    Path("real.txt").write_text("keep me\n")
    Path("link.txt").symlink_to("real.txt")
    done = refused(cli, "link.txt", "is a symbolic link")
    assert "real.txt" in done.err
    assert Path("link.txt").is_symlink() and Path("real.txt").read_text() == "keep me\n"
    Path("db-link").symlink_to(store.path)
    refused(cli, "db-link", "is the database")
    assert Path("db-link").is_symlink()


def test_a_named_pipe_and_a_socket_are_refused(store: Store, cli: Cli) -> None:
    os.mkfifo("pipe")
    done = refused(cli, "pipe", "is a named pipe")
    assert "judgepool export qrels > pipe" in done.err  # what to do instead
    assert stat.S_ISFIFO(os.lstat("pipe").st_mode)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        refused(cli, "sock", "is a socket")
        assert stat.S_ISSOCK(os.lstat("sock").st_mode)


def test_a_device_is_refused(store: Store, cli: Cli) -> None:
    # A device node of our own in tmp_path (never a system one such as /dev/null: the bug this
    # tests would replace it with a regular file): the null device, major 1 minor 3.
    try:
        os.mknod("null-device", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here ({err}): needs root or CAP_MKNOD")
    refused(cli, "null-device", "is a device")
    assert stat.S_ISCHR(os.lstat("null-device").st_mode)


def test_a_regular_file_is_still_replaced_atomically(store: Store, cli: Cli) -> None:
    Path("old.qrels").write_text("old\n")
    done = cli("export", "qrels", "-o", "old.qrels")
    assert done.code == 0, done.err
    assert Path("old.qrels").read_text().startswith("q1 0 q1-d00 3\n")
    assert sorted(p.name for p in Path(".").iterdir() if p.name.startswith(".old")) == []
