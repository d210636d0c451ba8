"""The house's layers hold for every module of the package (DESIGN.md): each imports only from
below it, and no import cycle exists anywhere, counting imports inside functions and under
TYPE_CHECKING too (an `if TYPE_CHECKING` import is still a dependency a reader must follow).

    errors, defaults          the bottom: import nothing of judgepool
    stats, host               numerics; the machine's refusals (errors only)
    pooling                   io <- store <- pools, rankings, ingest, audit data
    judge, metrics            each on pooling; neither imports the other
    reports                   rendering of metrics' results
    api (and `judgepool`)     the front door and the service functions
    ui                        the CLI and the dashboard
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.conftest import PKG

LAYERS = {
    "errors": 0,
    "defaults": 0,
    "stats": 1,
    "host": 1,  # the machine's refusals (disk full ...), on errors
    "pooling": 2,
    "judge": 3,
    "metrics": 3,
    "reports": 4,
    "api": 5,
    "": 6,  # judgepool/__init__.py: the front door, naming api's objects
    "ui": 7,
}
# Inside pooling: files and formats, then the database, then what is built on both.
POOLING_LAYERS = {"io": 0, "store": 1}
POOLING_TOP = 2


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


@functools.cache
def _graph() -> dict[str, set[str]]:
    """module -> the judgepool modules it imports anywhere in its body (parsed once per test
    process: three tests read it, and none changes it)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:  # `from a import b`: the module a.b when b is one
                    full = f"{node.module}.{alias.name}"
                    targets.append(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer(module: str) -> int:
    return LAYERS[_package(module)]


def _pooling_layer(module: str) -> int:
    parts = module.split(".")
    return POOLING_LAYERS.get(parts[2], POOLING_TOP) if len(parts) > 3 else POOLING_TOP


def test_every_module_has_a_layer() -> None:
    assert sorted({_package(m) for m in _modules()} - set(LAYERS)) == []


def test_no_upward_or_sideways_import() -> None:
    wrong = []
    for source, targets in _graph().items():
        for target in targets:
            same = _package(source) == _package(target)
            if not same and _layer(target) >= _layer(source):
                wrong.append(f"{source} imports {target}")
            elif (
                same
                and _package(source) == "pooling"
                and _pooling_layer(target) > _pooling_layer(source)
            ):
                wrong.append(f"{source} imports {target} (above it inside pooling)")
    assert sorted(wrong) == []


def _dynamic_imports(path: Path) -> list[str]:
    """Modules named in `importlib.import_module("...")` / `__import__("...")` calls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            name = node.func.id if isinstance(node.func, ast.Name) else name
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append(node.args[0].value)
    return found


BELOW_THE_API = ("judgepool.pooling", "judgepool.judge")


def _below_the_api(module: str) -> bool:
    return any(module == b or module.startswith(f"{b}.") for b in BELOW_THE_API)


def test_the_ui_imports_nothing_below_the_api() -> None:
    """The CLI and the dashboard parse, call the api and render (issue 20.3): every module of
    judgepool/ui, statically, inside functions, under TYPE_CHECKING or through importlib."""
    graph, modules = _graph(), _modules()
    wrong = sorted(
        f"{source} imports {target}"
        for source in graph
        if _package(source) == "ui"
        for target in graph[source] | set(_dynamic_imports(modules[source]))
        if _below_the_api(target)
    )
    assert wrong == []


def test_the_ui_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\n"
        "def f():\n    from judgepool.judge.run import members\n"
        "importlib.import_module('judgepool.pooling.pool')\n"
    )
    assert _dynamic_imports(sample) == ["judgepool.pooling.pool"]
    assert _below_the_api("judgepool.judge.run") and not _below_the_api("judgepool.judgement")


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_anywhere() -> None:
    assert _cycle(_graph()) is None


def test_the_checker_sees_an_upward_import_and_a_cycle() -> None:
    """The rules above are not vacuous: a made-up graph that breaks them is caught."""
    graph = {
        "judgepool.pooling.pool": {"judgepool.metrics.gate"},
        "judgepool.metrics.gate": {"judgepool.pooling.pool"},
    }
    assert _cycle(graph) == [
        "judgepool.metrics.gate",
        "judgepool.pooling.pool",
        "judgepool.metrics.gate",
    ]
    assert _layer("judgepool.metrics.gate") > _layer("judgepool.pooling.pool")
    assert _pooling_layer("judgepool.pooling.store.claims") > _pooling_layer(
        "judgepool.pooling.io.formats"
    )
