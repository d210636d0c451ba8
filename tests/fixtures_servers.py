"""Fixtures: the fake provider servers, real HTTP servers on 127.0.0.1 that the real litellm
client talks to (tests/fake_openai.py), each on a free port of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_openai import FakeOpenAI

#: The key the judge tests pass to the fake server; tests check it never leaks into output.
FAKE_KEY = "sk-judgepool-test-KEY-7f3c1e9a5b2d"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server, with OPENAI_API_KEY set to FAKE_KEY for its calls."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    with FakeOpenAI() as server:
        yield server
