"""The name a run gets: --name, else the file's one tag, else the file name's stem; never a clash.

Official TREC submissions are all called input.TAG.gz: named by the stem they all became 'input'
and, given in one command, silently replaced each other.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.ingest_helpers import snapshot

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]


def _run(tag: str, doc: str = "d1") -> bytes:
    return gzip.compress(f"q1 Q0 {doc} 1 2.0 {tag}\nq2 Q0 {doc} 1 1.0 {tag}\n".encode())


def _names() -> list[tuple[str, int]]:
    with Store().read() as con:
        found = con.execute("SELECT name, n_rows FROM runs ORDER BY 1").fetchall()
    return [(str(n), int(r)) for n, r in found]


def test_official_submissions_are_named_by_their_tag(cli: Cli, write: Writer) -> None:
    a = write("trec2019/input.bm25base.gz", _run("bm25base"))
    b = write("trec2019/input.colbert_v2.gz", _run("colbert_v2"))
    done = cli("ingest", "run", a, b)
    assert done.code == 0, done.err
    assert "run 'bm25base' added" in done.out and "run 'colbert_v2' added" in done.out
    assert _names() == [("bm25base", 2), ("colbert_v2", 2)]


def test_a_file_with_several_tags_is_named_by_its_stem(cli: Cli, write: Writer) -> None:
    path = write("fused.trec", "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 splade\n")
    assert cli("ingest", "run", path).code == 0
    assert _names() == [("fused", 2)]


def test_two_inputs_with_one_name_are_refused_before_anything_is_written(
    cli: Cli, write: Writer
) -> None:
    assert cli("ingest", "run", write("kept.trec", "q1 Q0 d9 1 1.0 kept\n")).code == 0
    before = snapshot(Path("test.duckdb"))
    first = write("a/input.sub.gz", _run("sub", "d1"))
    second = write("b/input.sub.gz", _run("sub", "d2"))
    done = cli("ingest", "run", first, second)
    assert done.code == 2
    message = done.err.splitlines()[0]
    assert "error: " in message and "'sub'" in message
    assert str(first) in message and str(second) in message
    assert "--name" in message.split(" — ", 1)[1]
    assert snapshot(Path("test.duckdb")) == before


def test_the_same_stem_in_two_folders_is_refused(cli: Cli, write: Writer) -> None:
    first = write("x/run.trec", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 b\n")
    second = write("y/run.trec", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 b\n")
    done = cli("ingest", "run", first, second)
    assert done.code == 2 and "'run'" in done.err
    assert not Path("test.duckdb").exists()


def test_name_with_several_files_says_what_to_do(cli: Cli, write: Writer) -> None:
    a, b = write("a.trec", "q1 Q0 d1 1 1.0 a\n"), write("b.trec", "q1 Q0 d1 1 1.0 b\n")
    done = cli("ingest", "run", a, b, "--name", "both")
    assert done.code == 2
    message = done.err.splitlines()[0]
    assert message.startswith("error: ") and "--name" in message and " — " in message
    assert "one file" in message.split(" — ", 1)[1]
    assert not Path("test.duckdb").exists()


def test_name_overrides_the_tag(cli: Cli, write: Writer) -> None:
    done = cli("ingest", "run", write("input.sub.gz", _run("sub")), "--name", "mine")
    assert done.code == 0 and "run 'mine' added" in done.out
    assert _names() == [("mine", 2)]


def test_a_tag_that_cannot_be_a_name_is_refused(cli: Cli, write: Writer) -> None:
    path = write("odd.trec", "q1 Q0 d1 1 2.0 bad\x07tag\n")
    done = cli("ingest", "run", path)
    assert done.code == 2 and "--name" in done.err and "control character" in done.err
