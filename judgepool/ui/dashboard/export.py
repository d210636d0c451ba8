"""Export page: download qrels (effective, human only, judge only) or JSONL with full provenance.

The bytes come from `judgepool.api.export`, the export `judgepool export qrels` writes,
so a download equals the command's output byte for byte; the page shows the equivalent command
and the file's SHA-256 so anyone can check. A Streamlit page script (run by `st.navigation`
with `__name__ == "__main__"`).
"""

from __future__ import annotations

import hashlib
import shlex

import streamlit as st

from judgepool.api.export import EXPORT_FORMATS, EXPORT_SOURCES, file_name
from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard import data
from judgepool.ui.dashboard.page import render_page
from judgepool.ui.dashboard.view import View, safe_version, show_error

SOURCE_HELP = {
    "effective": "the label every measure uses: latest human, else latest ok judge label",
    "human": "human labels only (qrels and overrides)",
    "judge": "judge labels only (the chosen judge, or any)",
}
PREVIEW_LINES = 12


def equivalent_command(view: View, source: str, fmt: str) -> str:
    """The `judgepool export qrels ...` command that writes the same bytes."""
    parts = ["judgepool", "--db", view.db, "export", "qrels", "--source", source]
    parts += ["--level", view.level, "--format", fmt]
    if view.labeller is not None:
        parts += ["--judge", view.labeller]
    parts += ["-o", file_name(view.level, source, fmt)]
    return shlex.join(parts)


def head(payload: bytes, lines: int) -> str:
    """The first `lines` lines of a (possibly large) export, without splitting all of it."""
    end = 0
    for _ in range(lines):
        found = payload.find(b"\n", end)
        if found < 0:
            end = len(payload)
            break
        end = found + 1
    return payload[:end].decode("utf-8")


def body(view: View) -> None:
    """Choices, the download button, its checksum and a preview (refreshed by the fragment)."""
    version = safe_version(view.db)
    if version is None:
        return
    left, right = st.columns(2)
    source = left.radio(
        "Labels",
        EXPORT_SOURCES,
        key="export_source",
        horizontal=True,
        captions=[SOURCE_HELP[s] for s in EXPORT_SOURCES],
    )
    fmt = right.radio(
        "Format",
        EXPORT_FORMATS,
        key="export_format",
        horizontal=True,
        captions=["qid 0 doc_id grade", "one label per line, every field and its provenance"],
    )
    try:
        payload = data.export(view.db, version, view.level, str(source), view.labeller, str(fmt))
    except JudgepoolError as err:
        show_error(err)
        return
    lines = payload.count(b"\n")
    name = file_name(view.level, str(source), str(fmt))
    st.download_button(
        f"Download {name} ({lines} labels)",
        data=payload,
        file_name=name,
        mime="text/plain" if fmt == "trec" else "application/jsonl",
        key="export_download",
        on_click="ignore",
        type="primary",
    )
    st.text(
        f"{lines} labels, {len(payload)} bytes, {view.level} level, sha256 "
        f"{hashlib.sha256(payload).hexdigest()}"
    )
    st.caption("The same file from the command line:")
    st.code(equivalent_command(view, str(source), str(fmt)), language="bash", wrap_lines=True)
    st.caption(f"First {PREVIEW_LINES} lines")
    st.code(head(payload, PREVIEW_LINES) or "(no labels)", language=None)


def render() -> None:
    """Draw the page."""
    render_page("Export", body)


if __name__ == "__main__":
    render()
