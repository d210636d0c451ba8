"""The prompt verbs: the exact prompt a judge sends for one pair, and the templates there are, as
`jp.Database.render_prompt`, `jp.templates()` and `judgepool prompt render | list | show` (and
the dashboard's prompt view) do it.

    found = render(store, "q1", "d7", JudgeOptions(model="openai/gpt-4o-mini", level="doc"))
    found.messages, found.cache_key, found.body      # what is sent, the cache key, the body
    templates()                                      # the packaged templates
    template, text = show("relevance-v1")            # a template's file, as it is hashed

The work is judge/render.py's (the judge's own request building, messages and cache key): the
same options as a judge run give the same request. No call is made and no key is needed.
"""

from __future__ import annotations

from judgepool.judge.options import JudgeOptions
from judgepool.judge.prompt import DEFAULT_TEMPLATE, Template
from judgepool.judge.render import RenderedPrompt
from judgepool.pooling.store.connection import Store

__all__ = ["RenderedPrompt", "Template", "render", "show", "templates"]


def render(store: Store, qid: str, doc_id: str, options: JudgeOptions) -> RenderedPrompt:
    """The prompt of (qid, doc_id) as a judge run with `options` would send it: its messages
    after normalisation, truncation and fencing, and with a `model` the cache key and the
    request body litellm sends (without one: the template's messages, and no key)."""
    from judgepool.judge.render import render_prompt

    o = options
    return render_prompt(
        store,
        qid,
        doc_id,
        o.level,
        model=o.model,
        template=o.template,
        runs=o.runs,
        passage_tokens=o.passage_tokens,
        max_chunks=o.max_chunks,
        query_tokens=o.query_tokens,
        temperature=o.temperature,
        max_tokens=o.max_tokens,
        reasoning_effort=o.reasoning_effort,
    )


def templates() -> list[Template]:
    """The packaged templates, by name: name, version, hash and file of each."""
    from judgepool.judge.prompt import templates as packaged

    return packaged()


def show(name: str = DEFAULT_TEMPLATE) -> tuple[Template, str]:
    """A template (a packaged name or a file) and its file's text, as it is hashed: a copy,
    given a new `# version:`, is a template of one's own."""
    from judgepool.judge.prompt import template_text

    return template_text(name)
