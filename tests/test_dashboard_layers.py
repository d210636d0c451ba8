"""The dashboard is a renderer over judgepool.api: no module of it (ui/app.py, ui/dashboard/*)
imports judgepool.pooling or judgepool.judge, anywhere in its body (inside functions and under
TYPE_CHECKING too), nor names them to importlib."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import PKG

BELOW = ("judgepool.pooling", "judgepool.judge")


def _below(name: str) -> bool:
    return any(name == b or name.startswith(b + ".") for b in BELOW)


def forbidden_imports(source: str) -> list[str]:
    """Each import of `source` that reaches below the api, as `line: module`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                names = [str(first.value)]
        hits = [n for n in dict.fromkeys(names) if _below(n)]
        if hits:
            found.append(f"{getattr(node, 'lineno', 0)}: {hits[0]}")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def dashboard_modules() -> list[Path]:
    return [PKG / "ui" / "app.py", *sorted((PKG / "ui" / "dashboard").rglob("*.py"))]


def test_the_dashboard_imports_nothing_below_the_api() -> None:
    modules = dashboard_modules()
    assert len(modules) > 15  # the scan sees the pages, not an empty folder
    wrong = [
        f"{path.relative_to(PKG.parent)}:{hit}"
        for path in modules
        for hit in forbidden_imports(path.read_text(encoding="utf-8"))
    ]
    assert wrong == []


def test_the_scan_finds_every_kind_of_import() -> None:
    source = """
from typing import TYPE_CHECKING
import judgepool.api.browse
from judgepool import api
from judgepool.api.store import Store
if TYPE_CHECKING:
    from judgepool.pooling.audit.browse import LabelDetail
def page():
    import judgepool.judge.render
    from judgepool import pooling
    importlib.import_module("judgepool.pooling.export")
    from judgepool.judge import prompt
"""
    assert forbidden_imports(source) == [
        "7: judgepool.pooling.audit.browse",
        "9: judgepool.judge.render",
        "10: judgepool.pooling",
        "11: judgepool.pooling.export",
        "12: judgepool.judge",
    ]
