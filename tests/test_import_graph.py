"""No import cycles inside a package, counting imports inside functions too (issue 12.5), and
the one-way dependencies between the packages: ui -> metrics, judge -> pooling."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = ("pooling", "judge", "metrics", "ui")
# Which packages each may import (besides itself): DESIGN.md's arrows.
ALLOWED = {
    "pooling": set(),
    "judge": {"pooling"},
    "metrics": {"pooling"},
    "ui": {"pooling", "judge", "metrics"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "judgepool." + ".".join(parts)


def _graph() -> dict[str, set[str]]:
    """module -> the judgepool modules it imports anywhere in its body."""
    modules = {
        _module_name(p): p for package in PACKAGES for p in (REPO / package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]], package: str) -> list[str] | None:
    inside = {m for m in graph if m.split(".")[1] == package}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node] & inside):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(inside):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    assert _cycle(_graph(), package) is None


def test_packages_depend_one_way() -> None:
    wrong = sorted(
        f"{source} imports {target}"
        for source, targets in _graph().items()
        for target in targets
        if target.split(".")[1] != source.split(".")[1]
        and target.split(".")[1] not in ALLOWED[source.split(".")[1]]
    )
    assert wrong == []
