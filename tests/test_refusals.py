"""Every refusal of eval, compare, pool, export, status, runs, queries, labels and ui ends with
what to do (issue 11.21): `error: problem — what to do`, one line, exit code non-zero.

Two enumerations: every place in the code behind these commands that makes one of our errors
must give it a hint (read from the source, so a new refusal without one fails here), and each
refusal a user can reach from the command line is driven through the real CLI.
"""

from __future__ import annotations

import ast
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.pooling.store.connection import Store
from tests.conftest import PKG, REPO, CliResult

Cli = Callable[..., CliResult]

# The code behind these commands (ingest and judge have their own owners and tests).
MODULES = [
    *sorted((PKG / "metrics").glob("*.py")),
    *sorted((PKG / "reports").glob("*.py")),
    PKG / "errors.py",
    *(
        PKG / "pooling" / f"{name}.py"
        for name in (
            "export",
            "io/outfile",
            "idcheck",
            "store/inventory",
            "store/judgments",
            "lift",
            "pool",
            "rankings",
            "store/connection",
            "audit/browse",
            "audit/overrides",
        )
    ),
    *(
        PKG / "ui" / "commands" / f"{name}.py"
        for name in (
            "evaluate",
            "export",
            "info",
            "labels",
            "pool",
            "serve",
        )
    ),
    PKG / "ui" / "options.py",
    PKG / "ui" / "cli.py",
]
ERRORS = {
    "JudgepoolError",
    "UsageError",
    "DatabaseError",
    "DatabaseBusyError",
    "GateRefusedError",
    "HostError",
}


def _hintless(path: Path) -> list[str]:
    """`file:line` of every construction of one of our errors without a hint."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if name not in ERRORS:
            continue
        hinted = len(node.args) >= 2 or any(k.arg == "hint" for k in node.keywords)
        if not hinted:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_error_made_in_this_code_says_what_to_do() -> None:
    assert all(path.exists() for path in MODULES)
    missing = [where for path in MODULES for where in _hintless(path)]
    assert missing == [], "errors without a hint (what to do): " + ", ".join(missing)


def test_click_itself_is_not_used_for_refusals() -> None:
    """click.UsageError / BadParameter print 'Usage: ... Error: ...' with no advice: use ours."""
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        assert "click.UsageError(" not in text and "click.BadParameter(" not in text, path


REFUSALS: list[tuple[str, tuple[str, ...]]] = [
    ("unknown run", ("eval", "--run", "nope")),
    ("unknown run", ("compare", "base", "nope")),
    ("baseline twice", ("compare", "base", "base")),
    ("under the gate", ("compare", "base", "weak")),
    ("no candidate", ("compare", "base")),
    ("bad level", ("eval", "--level", "page")),
    ("bad k", ("eval", "--k", "0")),
    ("bad gate", ("compare", "base", "cand", "--gate", "2")),
    ("bad average", ("eval", "--average", "median")),
    ("unknown option", ("eval", "--nope")),
    ("pool format", ("pool", "--format", "tsv")),
    ("pool depth", ("pool", "--depth", "0")),
    ("pool unknown run", ("pool", "--run", "nope")),
    ("empty export", ("export", "qrels", "--level", "doc")),
    ("export onto the database", ("export", "qrels", "-o", "test.duckdb")),
    ("export into a missing folder", ("export", "qrels", "-o", "no/such/folder.txt")),
    ("bad source", ("export", "qrels", "--source", "both")),
    ("runs format", ("runs", "--format", "xml")),
    ("queries format", ("queries", "--format", "xml")),
    ("status format", ("status", "--format", "xml")),
    ("lift rule", ("labels", "lift", "--to", "doc", "--rule", "mean")),
    ("lift level", ("labels", "lift", "--to", "page")),
    ("ui port", ("ui", "--port", "0")),
    ("ui host", ("ui", "--host", "no-such-host.invalid")),
    ("unknown command", ("evaluate",)),
]


@pytest.mark.parametrize(("what", "args"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_each_refusal_ends_with_what_to_do(
    store: Store, cli: Cli, what: str, args: tuple[str, ...]
) -> None:
    done = cli(*args)
    assert done.code != 0, (what, done.out, done.err)
    errors = [line for line in done.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, (what, done.err)
    assert done.err.rstrip().splitlines()[-1] == errors[0], (what, done.err)  # it ends there
    problem, _, fix = errors[0].partition(" — ")
    assert problem and fix.strip(), (what, done.err)


@pytest.mark.parametrize(
    "args",
    [
        ("eval",),
        ("compare", "a", "b"),
        ("pool",),
        ("export", "qrels"),
        ("status",),
        ("runs",),
        ("queries",),
        ("labels", "lift", "--to", "doc"),
        ("ui",),
    ],
    ids=lambda a: " ".join(a),
)
def test_without_a_database_each_command_says_how_to_make_one(
    cli: Cli, args: tuple[str, ...]
) -> None:
    done = cli(*args)
    assert done.code != 0
    (line,) = [x for x in done.err.splitlines() if x.startswith("error: ")]
    assert "no database at" in line and "judgepool ingest" in line.split(" — ", 1)[1]


def test_a_taken_port_is_a_refusal_too(store: Store, cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = cli("ui", "--port", str(taken.getsockname()[1]))
    (line,) = [x for x in done.err.splitlines() if x.startswith("error: ")]
    assert " — " in line and "--port" in line.split(" — ", 1)[1]
