"""Read a grade 0-3 out of a judge's answer: the fixed form, then lenient forms, never a guess.

The prompt asks for exactly `##final score: N`. Models answer in other ways too: markdown
(`**Final score:** 2`), JSON (`{"M": 2, "T": 1, "O": 2}`, often inside a code fence), a line of
reasoning before the answer, a `<think>` block. `parse_grade` tries, in order:

1. strict      the whole answer is the fixed line (or, after reasoning, its last line is)
2. final-score every "final score: N" mention (markdown, quotes, `=` and `is` allowed)
3. json        JSON objects with an O / final_score / score / grade key
4. o-field     `O: N` or `O = N` (the final-score field of the UMBRELA steps)
5. score-line  a line that is only `score: N`, `grade: N`, `rating: N` or `relevance: N`
6. bare        the whole answer is a single digit

and stops at the first step that finds anything. The grades found there must be one and the same
integer 0-3; otherwise (two different grades, 2.5, 4, "2-3", "2/4") the answer is unparsed, as is
an empty answer or one with no grade at all (a refusal). An unparsed answer is never turned
into a 0. Bump PARSER_VERSION whenever the result for some answer could change: it is part of
every cache key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PARSER_VERSION = "1"

_STRICT = re.compile(r"##\s?final score:\s?([0-3])", re.IGNORECASE)
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_EMPHASIS = re.compile(r"\*\*|__|`")
_NUMBER = r"(?P<num>-?\d+(?:\.\d+)?)(?P<tail>\s*(?:/|-|–|\bto\b|\bor\b|\band\b|\bout of\b)\s*\d+)?"
_FINAL = re.compile(
    r"final[ _-]?(?:score|grade|rating|relevance(?: score)?)\s*[\"']?\s*(?:\(?\bO\b\)?)?\s*"
    r"(?:[:=]|\bis\b|\bof\b)?\s*[\"']?\s*" + _NUMBER,
    re.IGNORECASE,
)
_O_FIELD = re.compile(r"(?<![\w\"'])O[\"']?\s*[:=]\s*" + _NUMBER)
_SCORE_LINE = re.compile(
    r"^\s*[#>*-]*\s*(?:relevance\s+)?(?:score|grade|rating|relevance)\s*[:=]\s*"
    + _NUMBER
    + r"\s*\.?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_BARE = re.compile(r"^\s*([0-3])\s*\.?\s*$")
_JSON_KEYS = ("o", "final_score", "final score", "finalscore", "score", "grade", "relevance")


@dataclass(frozen=True)
class Parsed:
    """A grade and the step that found it, or no grade and the reason."""

    grade: int | None
    method: str | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.grade is not None


def _as_grade(num: str, tail: str | None) -> int | str:
    """A grade 0-3 from a matched number, or a description of why it is not one."""
    if tail:
        denominator = re.sub(r"\D+", " ", tail).split()
        words = re.sub(r"[\d\s]+", "", tail).lower()
        if not (words in ("/", "outof") and denominator == ["3"]):
            return f"ambiguous grade {num}{tail.strip()}"
    value = float(num)
    if not value.is_integer():
        return f"grade {num} is not a whole number"
    if not 0 <= value <= 3:
        return f"grade {num} is outside 0-3"
    return int(value)


def _decide(found: list[int | str], method: str) -> Parsed:
    grades = sorted({g for g in found if isinstance(g, int)})
    problems = [g for g in found if isinstance(g, str)]
    if problems:
        return Parsed(None, None, f"{method}: {problems[0]}")
    if len(grades) > 1:
        return Parsed(None, None, f"{method}: conflicting grades {', '.join(map(str, grades))}")
    return Parsed(grades[0], method)


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every outermost JSON object embedded in the text (nested ones are searched later)."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            yield value
        pos = text.find("{", end)


def _json_grade(obj: dict[str, Any], depth: int = 0) -> int | str | None:
    keys = {str(k).strip().lower(): v for k, v in obj.items()}
    for name in _JSON_KEYS:
        if name in keys:
            value = keys[name]
            if isinstance(value, bool):
                return f"grade {value!r} is not a number"
            if isinstance(value, int | float):
                return _as_grade(repr(value), None)
            if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", value):
                return _as_grade(value.strip(), None)
            return f"grade {value!r} is not a number"
    if depth == 0:
        for value in obj.values():
            if isinstance(value, dict):
                nested = _json_grade(value, 1)
                if nested is not None:
                    return nested
    return None


def parse_grade(text: str | None) -> Parsed:
    """The grade in a judge's answer, or why there is none (see the module docstring)."""
    if text is None or not text.strip():
        return Parsed(None, None, "empty answer")
    strict = _STRICT.fullmatch(text.strip())
    if strict:
        return Parsed(int(strict.group(1)), "strict")
    cleaned = _THINK.sub(" ", text)
    if re.search(r"<think>", cleaned, re.IGNORECASE):
        return Parsed(None, None, "the answer ends inside an unfinished <think> block")
    plain = _EMPHASIS.sub("", cleaned)
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    last = _STRICT.fullmatch(lines[-1]) if lines else None
    if last:
        return Parsed(int(last.group(1)), "last-line")
    found: list[int | str] = [_as_grade(m["num"], m["tail"]) for m in _FINAL.finditer(plain)]
    if found:
        return _decide(found, "final-score")
    json_found = [g for g in map(_json_grade, _json_objects(cleaned)) if g is not None]
    if json_found:
        return _decide(json_found, "json")
    for pattern, method in ((_O_FIELD, "o-field"), (_SCORE_LINE, "score-line")):
        found = [_as_grade(m["num"], m["tail"]) for m in pattern.finditer(plain)]
        if found:
            return _decide(found, method)
    bare = _BARE.match(plain)
    if bare:
        return Parsed(int(bare.group(1)), "bare")
    return Parsed(None, None, "no grade found")
