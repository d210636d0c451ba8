"""What a fresh `judgepool` process imports: start-up is most of a short command's time.

Checked in real processes, as the console script runs (no timing: the names in `sys.modules` at
exit), so the guard is deterministic: `--help` needs neither numpy nor DuckDB, and `eval` loads
what evaluating needs, not pydantic (the report's models run in the tests: tests/report_shape.py),
the judge, the dashboard, nor another command's module. The times themselves are measured by
bench/bench_startup.py and bench/bench_files.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

Cli = Callable[..., CliResult]
Writer = Callable[[str, str | bytes], Path]

# Runs the `judgepool` entry point with the given arguments; at exit, writes the imported
# modules' names (one a line) to the file named by JUDGEPOOL_TEST_MODULES.
_WRAPPER = """
import atexit, os, sys
def _write():
    with open(os.environ["JUDGEPOOL_TEST_MODULES"], "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
atexit.register(_write)
from judgepool.ui.cli import main
main()
"""

HEAVY = ("pydantic", "scipy", "streamlit", "litellm", "polars", "pyarrow", "pandas", "torch")


def imported(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh `judgepool ARGS` process had imported when it exited (code 0)."""
    listing = tmp_path / "modules.txt"
    env = {**os.environ, "JUDGEPOOL_TEST_MODULES": str(listing)}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return set(listing.read_text(encoding="utf-8").split())


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_eval_imports_no_pydantic_nor_other_heavy_library(
    tmp_path: Path, cli: Cli, write: Writer
) -> None:
    run = "".join(f"q{q} Q0 d{d} {d} {10 - d} t\n" for q in range(3) for d in range(5))
    qrels = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(0, 5, 2))
    assert cli("ingest", "qrels", write("q.qrels", qrels)).code == 0
    assert cli("ingest", "run", write("r.trec", run), "--name", "r").code == 0
    found = imported(tmp_path, "eval", "--format", "json")
    assert "judgepool.metrics.evaluate" in found  # it did evaluate
    assert _tops(found) & set(HEAVY) == set()


def test_eval_loads_only_what_evaluating_needs(tmp_path: Path, cli: Cli, write: Writer) -> None:
    assert cli("ingest", "qrels", write("q.qrels", "q1 0 d1 1\n")).code == 0
    assert cli("ingest", "run", write("r.trec", "q1 Q0 d1 1 1 t\n"), "--name", "r").code == 0
    found = imported(tmp_path, "eval", "--format", "json")
    commands = {m.rsplit(".", 1)[1] for m in found if m.startswith("judgepool.ui.commands.")}
    # evaluate.py, its options and the helpers it prints with; not judge, serve (socket,
    # subprocess), demo ...
    assert commands == {"evaluate", "measuring", "comparing", "corrected_table", "eval_tables"}
    # nor compare's verdicts and rules, nor the file readers of ingest
    unneeded = {"metrics.verdicts", "metrics.compare", "metrics.regression", "pooling.io.readers"}
    assert {f"judgepool.{m}" for m in unneeded} & found == set()


def test_help_imports_neither_numpy_nor_duckdb(tmp_path: Path) -> None:
    found = imported(tmp_path, "--help")
    assert _tops(found) & {"numpy", "duckdb", *HEAVY} == set()


def test_every_command_is_loaded_under_its_name() -> None:
    import click

    from judgepool.ui.cli import COMMANDS, cli

    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name, name
    assert cli.get_command(ctx, "no-such-command") is None


def test_numpy_blas_gets_one_thread_unless_the_user_chose() -> None:
    """Set before numpy loads (`--help` above: the command's module imports no numpy)."""
    code = "import os, judgepool.ui.cli; print(os.environ['OPENBLAS_NUM_THREADS'])"
    for given, expected in ((None, "1"), ("2", "2")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == expected
