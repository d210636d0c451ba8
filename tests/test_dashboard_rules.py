"""House rules of the dashboard code, checked on its source: every widget has a key, no data is
rendered as HTML or Markdown, and `judgepool --help` does not import the dashboard's libraries."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "judgepool"
SOURCES = [*sorted((PKG / "ui" / "dashboard").glob("*.py")), PKG / "ui" / "app.py"]
WIDGETS = {
    "button",
    "checkbox",
    "dataframe",
    "download_button",
    "form_submit_button",
    "multiselect",
    "number_input",
    "radio",
    "selectbox",
    "text_area",
    "text_input",
    "toggle",
    "altair_chart",
}


def calls(path: Path) -> list[tuple[str, ast.Call]]:
    """(method name, call) of every `something.method(...)` call in the file."""
    return [
        (node.func.attr, node)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    ]


def test_every_widget_has_a_key() -> None:
    missing = [
        f"{path.name}:{call.lineno} {name}"
        for path in SOURCES
        for name, call in calls(path)
        if name in WIDGETS and not any(k.arg == "key" for k in call.keywords)
    ]
    assert missing == []


def test_no_html_and_markdown_only_from_literals() -> None:
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if "unsafe_allow_html" in text or ".html(" in text:
            found.append(f"{path.name}: HTML")
        for name, call in calls(path):
            if name in {"markdown", "write"} and not (
                call.args and isinstance(call.args[0], ast.Constant)
            ):
                found.append(f"{path.name}:{call.lineno} st.{name} of a non-literal")
    assert found == []


def test_commands_import_no_dashboard_library_at_startup() -> None:
    for module in ("serve.py", "export.py"):
        tree = ast.parse((PKG / "ui" / "commands" / module).read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        names = {a.name for n in top for a in n.names} | {
            n.module for n in top if isinstance(n, ast.ImportFrom) and n.module
        }
        assert not names & {"streamlit", "altair", "pandas", "duckdb", "numpy"}, module
