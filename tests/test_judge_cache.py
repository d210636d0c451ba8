"""The judge cache key is built from content (never ids) and everything that shapes an answer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgepool.judge.base import JudgeRequest, ShownSpan
from judgepool.judge.cache import ENV_CACHE_DIR, JudgeCache, cache_root, content_key, usable_entry
from judgepool.judge.llm import LLMJudge, LLMSettings
from judgepool.judge.parse import PARSER_VERSION
from judgepool.judge.prompt import load_template

Writer = Callable[[str, str | bytes], Path]


def request(
    doc_id: str = "d1",
    passage: str = "Water boils at 100 C.",
    query: str = "boiling",
    qid: str = "q1",
) -> JudgeRequest:
    return JudgeRequest(qid, doc_id, "chunk", query, passage, (ShownSpan(doc_id, 0, len(passage)),))


def judge(**changes: object) -> LLMJudge:
    settings = {"model": "openai/gpt-4o-mini", **changes}
    return LLMJudge(LLMSettings(**settings))  # type: ignore[arg-type]


def test_key_is_content_not_ids() -> None:
    base = judge().cache_key(request())
    assert base.startswith("judge1:")
    assert judge().cache_key(request(doc_id="other-id", qid="q9")) == base
    assert judge().cache_key(request(passage="  Water boils\n at 100 C. ")) == base
    assert judge().cache_key(request(passage="Water boils at 100 F.")) != base
    assert judge().cache_key(request(query="boiling point")) != base


def test_key_is_exactly_the_documented_parts() -> None:
    j = judge(temperature=0.0, max_tokens=256)
    expected = content_key(
        {
            "judge": "llm",
            "model": "openai/gpt-4o-mini",
            "parameters": {"temperature": 0.0, "max_tokens": 256},
            "template_hash": load_template().hash,
            "parser_version": PARSER_VERSION,
            "query": "boiling",
            "passage": "Water boils at 100 C.",
        }
    )
    assert j.cache_key(request()) == expected


@pytest.mark.parametrize(
    "change",
    [
        {"model": "openai/gpt-4o"},
        {"temperature": 0.7},
        {"max_tokens": 64},
    ],
)
def test_model_and_parameters_change_the_key(change: dict[str, object]) -> None:
    assert judge(**change).cache_key(request()) != judge().cache_key(request())


def test_template_changes_the_key_and_the_endpoint_does_not(write: Writer) -> None:
    own = (
        Path(__file__).parent.parent / "judgepool" / "judge" / "prompts" / "relevance-v1.txt"
    ).read_text()
    edited = write("edited.txt", own.replace("assessor", "careful assessor"))
    assert judge(template=str(edited)).cache_key(request()) != judge().cache_key(request())
    # the same model behind another endpoint is the same model: the key does not change
    assert judge(api_base="http://127.0.0.1:9/v1").cache_key(request()) == judge().cache_key(
        request()
    )


def test_cache_stores_entries_across_instances(tmp_path: Path) -> None:
    entry = {"answer": {"status": "ok", "grade": 2, "raw_output": "##final score: 2"}, "x": "é"}
    with JudgeCache(tmp_path / "c") as cache:
        cache.put("k1", entry)
        assert "k1" in cache and len(cache) == 1
    with JudgeCache(tmp_path / "c") as cache:
        assert cache.get("k1") == entry
        assert cache.get("k2") is None
        assert cache.get_many(["k2", "k1"]) == {"k1": entry}


def test_only_ok_entries_with_a_grade_are_usable() -> None:
    assert usable_entry({"answer": {"status": "ok", "grade": 0}})
    assert not usable_entry({"answer": {"status": "unparsed", "grade": None}})
    assert not usable_entry({"answer": {"status": "ok", "grade": 4}})
    assert not usable_entry({"answer": "garbage"})


def test_cache_root_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert cache_root() == tmp_path / "cache"  # the autouse fixture's JUDGEPOOL_CACHE_DIR
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "judgepool"
    with JudgeCache() as cache:
        assert cache.directory == tmp_path / "xdg" / "judgepool" / "judge"
