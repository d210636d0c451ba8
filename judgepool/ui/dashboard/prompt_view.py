"""The Audit pair view's "show prompt": the exact messages a judge sends for the pair.

`db.render_prompt` does the work (judge/render.py: the judge's own request building, messages
and cache key), so what is shown is what `judgepool prompt render` prints and what is sent.
Messages are data: shown with `st.code`, never as Markdown or HTML. Nothing is rendered until
the toggle is on (a model makes litellm load).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from judgepool.errors import JudgepoolError
from judgepool.ui.dashboard.view import View, md, show_error

if TYPE_CHECKING:
    pass


def show_prompt(view: View, qid: str, doc_id: str) -> None:
    """A toggle that shows the pair's prompt, with a template and an optional model."""
    if not st.toggle("Show the prompt a judge sends for this pair", key="audit_show_prompt"):
        return
    import judgepool as jp

    names = [t.name for t in jp.templates()]
    left, right = st.columns(2)
    template = left.selectbox("Template", names, key="audit_prompt_template")
    model = right.text_input(
        "Model (optional: adds the cache key and the request body)",
        key="audit_prompt_model",
        placeholder="openai/gpt-4o-mini",
    ).strip()
    try:
        found = jp.open(view.db).render_prompt(
            qid, doc_id, level=view.level, model=model or None, template=template
        )
    except JudgepoolError as err:
        show_error(err)
        return
    t = found.template
    shown = ", ".join(f"{s.doc_id} [{s.start}:{s.end}]" for s in found.request.shown)
    cut = " · passage truncated" if found.request.truncated else ""
    st.caption(md(f"Template {t['name']} ({t['hash']}) · shown: {shown}{cut}"))
    if found.cache_key is not None:
        st.caption("Cache key")
        st.code(found.cache_key, language=None)
    messages = (found.body or {}).get("messages") if not found.body_converted else None
    for message in messages or found.messages:
        st.caption(md(f"{message['role']} message"))
        st.code(message["content"], language=None, wrap_lines=True)
