"""The `judgepool` process ends with its command, without the interpreter's teardown, and
nothing is lost by it: exit statuses, output to a file, atexit handlers, a database left
closed (no write-ahead log to replay), and the normal exit whenever a thread still runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

# The console script's own code, with two probes: an atexit handler, and an object whose
# finalizer runs only if the interpreter takes itself apart at exit.
_SCRIPT = """
import atexit, sys, threading, time
class Probe:
    def __del__(self):
        print("teardown ran", file=sys.stderr, flush=True)
probe = Probe()
atexit.register(lambda: print("atexit ran", file=sys.stderr, flush=True))
if "--thread" in sys.argv:
    sys.argv.remove("--thread")
    threading.Thread(target=time.sleep, args=(0.5,)).start()
from judgepool.ui.cli import main
main()
"""


def _judgepool(
    *args: str, stdout: int | Path = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUDGEPOOL_DB": str(Path("test.duckdb").resolve())}
    command = [sys.executable, "-c", _SCRIPT, *args]
    if isinstance(stdout, Path):
        with stdout.open("w") as out:
            return subprocess.run(command, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, capture_output=True, text=True)


def test_the_process_ends_without_teardown_and_keeps_its_status(cli: Cli, write: Writer) -> None:
    assert cli("ingest", "run", write("r.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")).code == 0
    done = _judgepool("runs")
    assert done.returncode == 0, done.stderr
    assert "atexit ran" in done.stderr  # the handlers still run
    assert "teardown ran" not in done.stderr  # the interpreter's teardown does not
    assert "r.trec" in done.stdout
    for args in (("runs", "--bogus"), ("pool", "--run", "nope"), ("ingest", "run", "no.trec")):
        assert _judgepool(*args).returncode == cli(*args).code != 0, args


def test_output_to_a_file_is_whole(cli: Cli, write: Writer, tmp_path: Path) -> None:
    lines = "".join(f"q{q} 0 d{d} {d % 4}\n" for q in range(50) for d in range(40))
    assert cli("ingest", "qrels", write("big.qrels", lines)).code == 0
    out = tmp_path / "labels.qrels"
    done = _judgepool("export", "qrels", stdout=out)
    assert done.returncode == 0, done.stderr
    assert "teardown ran" not in done.stderr
    assert sorted(out.read_text().splitlines()) == sorted(lines.splitlines())


def test_an_ingest_leaves_the_database_closed(write: Writer) -> None:
    done = _judgepool("ingest", "run", str(write("r.trec", "q1 Q0 d1 1 2.0 t\n")))
    assert done.returncode == 0, done.stderr
    assert "teardown ran" not in done.stderr
    assert Path("test.duckdb").exists() and not Path("test.duckdb.wal").exists()


def test_a_thread_still_running_gets_the_normal_exit(cli: Cli, write: Writer) -> None:
    assert cli("ingest", "run", write("r.trec", "q1 Q0 d1 1 2.0 t\n")).code == 0
    done = _judgepool("runs", "--thread")
    assert done.returncode == 0, done.stderr
    assert "teardown ran" in done.stderr and "atexit ran" in done.stderr
