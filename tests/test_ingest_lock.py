"""An ingest holds the database's write lock only to swap its data in, never while it parses.

Two real processes: one keeps making short writes (as a judge labelling pairs does) while
`judgepool ingest` reads a large generated file. When the ingest held the lock for its whole
parse, a short write waited nearly as long as the whole ingest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store

REPO = Path(__file__).resolve().parent.parent

# Short writes until the stop file appears, then "writes longest-wait"; exits 3 if one gave up.
SHORT_WRITER = """
import os, sys, time
from judgepool.errors import DatabaseBusyError
from judgepool.pooling.store.connection import Store
store, stop, writes, longest = Store(sys.argv[1]), sys.argv[2], 0, 0.0
print("writing", flush=True)
while not os.path.exists(stop):
    started = time.monotonic()
    try:
        with store.write() as con:
            con.execute("INSERT INTO queries VALUES (?, 'x', NULL, now())", [f"w{writes}"])
    except DatabaseBusyError as err:
        print(f"busy after {time.monotonic() - started:.2f} s: {err}", flush=True)
        sys.exit(3)
    longest = max(longest, time.monotonic() - started)
    writes += 1
    time.sleep(0.02)
print(f"{writes} {longest:.3f}", flush=True)
"""


def _child(code: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _judgepool(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgepool.ui.cli", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _write_lines(path: Path, lines: int, kind: str) -> None:
    with path.open("w") as fh:
        for i in range(lines):
            qid, doc = f"q{i // 1000}", f"doc-{i}"
            if kind == "run":
                fh.write(json.dumps({"qid": qid, "doc_id": doc, "score": (i * 7919) % 1000}) + "\n")
            elif kind == "qrels":
                fh.write(json.dumps({"qid": qid, "doc_id": doc, "grade": i % 4}) + "\n")
            else:
                fh.write(json.dumps({"doc_id": doc, "text": f"passage {i} " * 8}) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "lines"), [("run", 250_000), ("qrels", 250_000), ("docs", 100_000)]
)
def test_a_short_writer_survives_a_long_ingest(tmp_path: Path, kind: str, lines: int) -> None:
    """The longest a short write waits while the ingest runs is under half of the ingest's own
    time, both measured in the same run: the swap is short, and the parse (which the old ingest
    did under the lock, most of its time) is not under the lock. Measured together, a loaded
    machine stretches both alike, so the bound holds however busy the machine is."""
    db = tmp_path / "shared.duckdb"
    with Store(db).write(create=True):
        pass
    big = tmp_path / f"big-{kind}.jsonl"
    _write_lines(big, lines, kind)
    env = {**os.environ, "JUDGEPOOL_DB": str(db)}
    stop = tmp_path / "stop"
    # patience enough never to give up: the test reads how long the writes waited
    writer = _child(SHORT_WRITER, str(db), str(stop), env={**env, "JUDGEPOOL_LOCK_TIMEOUT": "120"})
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        time.sleep(0.3)
        started = time.monotonic()
        ingest = _judgepool("ingest", kind, str(big), env=env)
        _, err = ingest.communicate(timeout=300)
        took = time.monotonic() - started
        stop.touch()
        w_out, w_err = writer.communicate(timeout=60)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
    assert ingest.returncode == 0, err
    assert writer.returncode == 0, f"the short writer died during the ingest: {w_out} {w_err}"
    writes, longest = w_out.split()
    assert int(writes) > 10
    assert float(longest) < took / 2, (
        f"a short write waited {float(longest):.2f} s during an ingest of {took:.2f} s: "
        "the ingest held the lock for most of its time"
    )
