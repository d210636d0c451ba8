"""The data verbs' commands are renderers over the api: they import nothing from judgepool.pooling
or judgepool.judge, anywhere in their body (inside functions and under TYPE_CHECKING too), and
reach the database through `judgepool.api`.

The modules are listed one by one: the other commands (the judge verbs, the dashboard) are
converted separately, and a test over the whole of judgepool/ui comes when they all are.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import PKG

UI = PKG / "ui"
CONVERTED = [
    UI / "cli.py",
    UI / "options.py",
    UI / "format.py",
    *(
        UI / "commands" / f"{name}.py"
        for name in (
            "data",
            "pool",
            "evaluate",
            "eval_tables",
            "comparing",
            "corrected_table",
            "report",
            "export",
            "floors",
            "info",
            "labels",
            "judges",
        )
    ),
]
BELOW_THE_API = ("judgepool.pooling", "judgepool.judge")


def imported(path: Path) -> list[str]:
    """Every module `path` imports, wherever the import statement is."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def _below(module: str) -> bool:
    return any(module == top or module.startswith(f"{top}.") for top in BELOW_THE_API)


@pytest.mark.parametrize("path", CONVERTED, ids=lambda p: str(p.relative_to(PKG)))
def test_a_data_command_imports_nothing_below_the_api(path: Path) -> None:
    assert [m for m in imported(path) if _below(m)] == []


def test_the_scan_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    """Not vacuous: the imports a command could hide are found."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from judgepool.pooling.pool import PoolSpec\n"
        "def command() -> None:\n"
        "    import judgepool.judge.session\n"
        "    from judgepool import pooling\n"
        "    from judgepool.api.pool import summary\n",
        encoding="utf-8",
    )
    assert [m for m in imported(sample) if _below(m)] == [
        "judgepool.pooling.pool",
        "judgepool.pooling.pool.PoolSpec",
        "judgepool.judge.session",
        "judgepool.pooling",
    ]
