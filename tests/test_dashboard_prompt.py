"""The Audit pair view's "show prompt" (AppTest): the messages `db.render_prompt` gives, as
plain text, and with a model its cache key; nothing is rendered until the toggle is on."""

from __future__ import annotations

import pytest

import judgepool as jp
from judgepool.judge.prompt import load_template
from judgepool.pooling.store.connection import Store
from tests.dashboard_db import TRICKY_PASSAGE, open_page, texts_of


@pytest.mark.slow
def test_the_pair_view_shows_the_prompt_a_judge_sends(store: Store) -> None:
    at = open_page("audit", tab="Browse & override")
    at.selectbox(key="audit_pair").set_value(("q1", "q1-d00")).run()
    assert not at.exception
    template = load_template()
    assert template.system not in texts_of(at, "code")  # off until asked for
    at.toggle(key="audit_show_prompt").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    expected = jp.open(store.path).render_prompt("q1", "q1-d00").messages
    codes = texts_of(at, "code")
    at_system = codes.index(template.system)
    assert codes[at_system : at_system + 2] == [m["content"] for m in expected]
    assert f"<<<PASSAGE\n{TRICKY_PASSAGE}\nPASSAGE>>>" in codes[at_system + 1]  # as text
    assert not any("<b>not html</b>" in m for m in texts_of(at, "markdown"))
    at.text_input(key="audit_prompt_model").set_value("openai/gpt-4o-mini").run()
    assert not at.exception
    key = jp.open(store.path).render_prompt("q1", "q1-d00", model="openai/gpt-4o-mini").cache_key
    assert key is not None and key in texts_of(at, "code")


@pytest.mark.slow
def test_a_model_that_sends_no_prompt_is_said_so(store: Store) -> None:
    at = open_page("audit", tab="Browse & override")
    at.selectbox(key="audit_pair").set_value(("q1", "q1-d00")).run()
    at.toggle(key="audit_show_prompt").set_value(True).run()
    at.text_input(key="audit_prompt_model").set_value("offline").run()
    assert not at.exception
    assert any("offline sends no prompt" in e for e in texts_of(at, "error"))
