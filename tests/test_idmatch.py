"""Near-matching ids: equal only after NFC normalisation or removing zero-width characters."""

from __future__ import annotations

from judgepool.pooling.io.idmatch import NearMatch, near_matches


def test_nfc_and_zero_width_near_matches_are_found_and_named() -> None:
    qrels = {"café-1", "doc7", "plain", "q\u200b9"}
    run = {"cafe\u0301-1", "doc\u200b7", "plain", "q9", "other", "d\ufeff\u0301x"}
    assert near_matches(run, qrels) == [
        NearMatch("cafe\u0301-1", "café-1", "NFC"),
        NearMatch("doc\u200b7", "doc7", "zero-width"),
        NearMatch("q9", "q\u200b9", "zero-width"),
    ]


def test_exact_matches_and_true_strangers_are_not_near_matches() -> None:
    assert near_matches({"a", "b"}, {"a", "c"}) == []
    assert near_matches([], {"a"}) == []


def test_both_transformations_and_the_limit() -> None:
    ours = [f"e\u0301\u200b{i}" for i in range(10)]
    theirs = [f"é{i}" for i in range(10)]
    found = near_matches(ours, theirs, limit=3)
    assert len(found) == 3
    assert {m.how for m in found} == {"NFC and zero-width"}
    assert [m.theirs for m in found] == ["é0", "é1", "é2"]
