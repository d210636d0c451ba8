"""Batch output and error files -> one counted outcome per custom_id we sent, never a 0.

An output or error file is JSONL, one line per request, in no particular order:

    {"id": "batch_req_...", "custom_id": "jp1-...",
     "response": {"status_code": 200, "request_id": "...", "body": <a chat completion>},
     "error": null}

A 200 line's answer is read with the online judge's parser (judge/parse.py): `ok` with a grade,
or `unparsed` with the raw text. Everything else is an `error` outcome with its kind: a non-200
response (`http_<code>`, the provider's message), an error object (its code, e.g.
`batch_expired` for what an expired batch left undone). A custom_id we sent that no line
answers is `missing` (expired or cancelled batches, a provider that dropped it). Lines that are
not JSON, have no custom_id, repeat one, or name one we never sent are counted, never guessed.

A custom_id answered more than once is never settled by a silent choice: the same grade again is
a repeat (counted, kept once); two different grades are a conflict, and the pair stays a hole
with the reason (`conflicting_answers`, both grades said). An answer with a grade beats one
without (`unparsed`), which beats an error: a provider may retry a failed line.

Tokens come from each answer's usage; its cost is at batch price (support.batch_rates), None
when the model's price is unknown or the answer has no usage. Raw answers and provider
messages are masked (judge/redact.py) before they are kept.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judgepool.judge.base import JudgeAnswer
from judgepool.judge.batch.support import BatchRates
from judgepool.judge.completion import completion_answer
from judgepool.judge.redact import Redactor

#: Outcome statuses: `ok` and `unparsed` carry an answer, `error` and `missing` do not.
STATUSES = ("ok", "unparsed", "error", "missing")
#: The kind of a custom_id answered with different grades (a hole, not a choice).
CONFLICT = "conflicting_answers"


@dataclass(frozen=True)
class LineOutcome:
    """What became of one custom_id."""

    custom_id: str
    status: str
    answer: JudgeAnswer | None = None
    kind: str | None = None
    message: str | None = None
    http_status: int | None = None
    request_id: str | None = None


@dataclass
class Collected:
    """Every custom_id we sent, with its outcome, and the lines that fit none."""

    outcomes: dict[str, LineOutcome]
    malformed: int = 0
    duplicates: int = 0  # lines beyond the first for a custom_id (repeats and conflicts)
    conflicts: int = 0  # custom_ids answered with different grades: holes, with the reason
    unknown: list[str] = field(default_factory=list)  # custom_ids we never sent, one per line

    def counts(self) -> Counter[str]:
        """Outcomes by status (ok, unparsed, error, missing)."""
        return Counter(o.status for o in self.outcomes.values())

    def kinds(self) -> Counter[str]:
        """Failed outcomes by kind (http_500, batch_expired, missing ...)."""
        return Counter(o.kind or "" for o in self.outcomes.values() if o.kind)

    @property
    def cost(self) -> float | None:
        """USD for the answers, at batch price; None when some answer could not be priced."""
        total = 0.0
        for outcome in self.outcomes.values():
            if outcome.answer is not None:
                if outcome.answer.cost is None:
                    return None
                total += outcome.answer.cost
        return total


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def answer_of(
    body: Any, rates: BatchRates | None, batch: dict[str, Any], mask: Redactor | None = None
) -> JudgeAnswer:
    """The storable JudgeAnswer of a 200 line's chat completion, read as the online judge reads
    its response (judge/completion.py), priced at batch rates."""
    return completion_answer(
        _dict(body),
        None if rates is None else lambda i, o, _reasoning: rates.cost(i, o),  # in o already
        None,  # no per-request latency
        {"batch": batch, "price_basis": rates.basis if rates is not None else None},
        mask,
    )


def _outcome(
    line: dict[str, Any],
    custom_id: str,
    rates: BatchRates | None,
    batch_id: str | None,
    mask: Redactor,
) -> LineOutcome:
    response = line.get("response") if isinstance(line.get("response"), dict) else None
    error = line.get("error") if isinstance(line.get("error"), dict) else None
    status_code = _int(response.get("status_code")) if response else None
    request_id = _text(response.get("request_id")) if response else None
    if response is not None and status_code == 200 and error is None:
        where = {
            "id": batch_id,
            "custom_id": custom_id,
            "request_id": request_id,
            "line_id": _text(line.get("id")),
        }
        answer = answer_of(response.get("body"), rates, where, mask)
        return LineOutcome(custom_id, answer.status, answer, http_status=200, request_id=request_id)
    if error is not None:
        kind = _text(error.get("code")) or "error"
        message = _text(error.get("message")) or ""
    elif response is not None:
        body = _dict(response.get("body"))
        detail = _dict(body.get("error"))
        kind = f"http_{status_code}" if status_code is not None else "no_status"
        message = _text(detail.get("message")) or json.dumps(body)[:300]
    else:
        kind, message = "no_response", "the line has neither a response nor an error"
    return LineOutcome(
        custom_id,
        "error",
        kind=kind,
        message=mask.text(message)[:500],
        http_status=status_code,
        request_id=request_id,
    )


def _grade(outcome: LineOutcome) -> int | None:
    answer = outcome.answer
    return answer.grade if answer is not None and answer.status == "ok" else None


def _rank(outcome: LineOutcome) -> int:
    """Which of two lines for one custom_id stands: a grade, then an answer, then an error."""
    return 2 if _grade(outcome) is not None else 1 if outcome.answer is not None else 0


def collect(
    expected: Iterable[str],
    files: Iterable[bytes | None],
    rates: BatchRates | None,
    batch_id: str | None = None,
) -> Collected:
    """The outcome of every expected custom_id from a batch's output and error files."""
    wanted = set(expected)
    mask = Redactor()  # the environment's secrets, read once for the whole file
    found: dict[str, LineOutcome] = {}
    grades: dict[str, list[int | None]] = {}  # custom_id -> the grade of each of its lines
    result = Collected(found)
    for data in files:
        if not data:
            continue
        for raw in data.splitlines():
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                result.malformed += 1
                continue
            custom_id = _text(line.get("custom_id")) if isinstance(line, dict) else None
            if custom_id is None:
                result.malformed += 1
            elif custom_id not in wanted:
                result.unknown.append(custom_id)
            elif custom_id in found:
                result.duplicates += 1
                again = _outcome(line, custom_id, rates, batch_id, mask)
                grades.setdefault(custom_id, [_grade(found[custom_id])]).append(_grade(again))
                if _rank(again) > _rank(found[custom_id]):
                    found[custom_id] = again
            else:
                found[custom_id] = _outcome(line, custom_id, rates, batch_id, mask)
    for custom_id, seen in grades.items():
        given = sorted({g for g in seen if g is not None})
        if len(given) > 1:  # two answers that disagree: neither is chosen
            result.conflicts += 1
            found[custom_id] = LineOutcome(
                custom_id,
                "error",
                kind=CONFLICT,
                message=f"answered {len(seen)} times with different grades "
                f"({', '.join(map(str, given))}): kept as a hole, not a choice",
            )
    for custom_id in sorted(wanted - found.keys()):
        found[custom_id] = LineOutcome(
            custom_id, "missing", kind="missing", message="no line in the output or error file"
        )
    return result
