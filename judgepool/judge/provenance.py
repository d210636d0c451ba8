"""Answers -> label rows with provenance: paid answers, shared texts, cache hits, failures, no_text.

Every judge label carries, in `judgments.provenance`: the judge's own description (model,
api_base host, template version and hash, decoding parameters, parser version ...), the cache key,
what was shown (chunk ids and character ranges) and whether it was truncated, when the answer was
produced, and the judge's per-answer details (parse step, finish reason, response id). A label
that cost nothing says why under `cache`: a hit from an earlier run, or a text another pair of
this run already paid for; the original cost is kept there, the row's `cost` is what this row
cost (0). The raw output, tokens, cost and latency have their own columns.

What a judge answered is stored as `storable` makes it: secrets masked (judge/redact.py) in the
raw output and the per-answer provenance, and a raw output longer than RAW_OUTPUT_LIMIT
characters kept as its beginning and its end (where the grade line is) with `raw_output_cut`
giving the full length. The grade is parsed from the whole answer before that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from judgepool.judge.base import JudgeAnswer, JudgeRequest
from judgepool.judge.redact import Redactor, redact
from judgepool.judge.requests import Skipped
from judgepool.pooling.store.judgments import Judgment

#: Characters of a raw answer that are stored (about 8 kB); longer ones keep both ends.
RAW_OUTPUT_LIMIT = 8192
_RAW_TAIL = 2048


def now_iso() -> str:
    """The time an answer was produced (UTC, ISO 8601, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def cut_raw_output(text: str, limit: int = RAW_OUTPUT_LIMIT) -> str:
    """`text` if it fits `limit` characters, else its beginning and end around a marker that
    says how much was left out (the result fits `limit`)."""
    if len(text) <= limit:
        return text
    marker = f"\n[... {len(text):,} characters in all; the middle was not stored ...]\n"
    head = max(0, limit - _RAW_TAIL - len(marker))
    return text[:head] + marker + text[len(text) - _RAW_TAIL :]


def storable(answer: JudgeAnswer, mask: Redactor | None = None) -> JudgeAnswer:
    """The answer as it may be stored: secrets masked, a long raw output cut (and flagged).
    `mask`: the environment's secrets read once for many answers (judge/redact.py)."""
    mask = mask or Redactor()
    provenance = mask.value(answer.provenance)
    raw = answer.raw_output
    if raw is not None:
        raw = mask.text(raw)
        if len(raw) > RAW_OUTPUT_LIMIT:
            provenance["raw_output_cut"] = {"chars": len(raw), "kept": RAW_OUTPUT_LIMIT}
            raw = cut_raw_output(raw)
    return dataclasses.replace(answer, raw_output=raw, provenance=provenance)


def answer_fields(answer: JudgeAnswer) -> dict[str, Any]:
    """The columns an answer fills (also what the cache keeps of it)."""
    return {
        "status": answer.status,
        "grade": answer.grade,
        "raw_output": answer.raw_output,
        "tokens_in": answer.tokens_in,
        "tokens_out": answer.tokens_out,
        "cost": answer.cost,
        "latency_s": answer.latency_s,
    }


class LabelMaker:
    """Builds the `Judgment`s of one judge (its labeller name and description fixed); `purpose`
    is what its labels are for (pooling.store.judgments.PURPOSES: `calibration` for a calibration
    run)."""

    def __init__(self, labeller: str, describe: dict[str, Any], purpose: str = "label") -> None:
        self.labeller = labeller
        self.describe = describe
        self.purpose = purpose

    def _row(
        self,
        request: JudgeRequest,
        key: str,
        fields: dict[str, Any],
        provenance: dict[str, Any],
        cost: float | None,
        note: str | None = None,
    ) -> Judgment:
        return Judgment(
            qid=request.qid,
            doc_id=request.doc_id,
            grade=fields.get("grade"),
            source="judge",
            labeller=self.labeller,
            status=str(fields["status"]),
            level=request.level,
            raw_output=fields.get("raw_output"),
            tokens_in=fields.get("tokens_in"),
            tokens_out=fields.get("tokens_out"),
            cost=cost,
            latency_s=fields.get("latency_s"),
            provenance={
                **provenance,
                "cache_key": key,
                "shown": [
                    {"doc_id": s.doc_id, "start": s.start, "end": s.end} for s in request.shown
                ],
                "truncated": request.truncated,
                "query_truncated": request.query_truncated,
                **({request.purpose: dict(request.about)} if request.about else {}),
            },
            note=note,
            # a planted pair says its purpose (a canary); any other takes the maker's (a
            # calibration run's labels are all calibration labels)
            purpose=request.purpose if request.purpose != "label" else self.purpose,
        )

    def cache_entry(self, answer: JudgeAnswer, judged_at: str) -> dict[str, Any]:
        """What the cache keeps of an ok answer: enough to label a later hit as this one."""
        return {
            "labeller": self.labeller,
            "describe": self.describe,
            "answer": answer_fields(answer),
            "answer_provenance": answer.provenance,
            "judged_at": judged_at,
        }

    def answered(
        self,
        requests: Sequence[JudgeRequest],
        key: str,
        answer: JudgeAnswer,
        attempt: int,
        judged_at: str,
    ) -> list[Judgment]:
        """The first request paid for the answer; the others share its text (cost 0)."""
        fields = answer_fields(answer)
        base = {**self.describe, "answer": answer.provenance, "judged_at": judged_at}
        first, *rest = requests
        rows = [self._row(first, key, fields, {**base, "attempt": attempt}, answer.cost)]
        shared = {
            **base,
            "cache": {
                "hit": True,
                "shared_with": [first.qid, first.doc_id],
                "original_cost": answer.cost,
            },
        }
        rows += [self._row(other, key, fields, shared, 0.0) for other in rest]
        return rows

    def cached(
        self, requests: Sequence[JudgeRequest], key: str, entry: dict[str, Any]
    ) -> list[Judgment]:
        """Labels from a cache hit, with the provenance the answer was first produced with."""
        fields = entry["answer"]
        provenance = {
            **entry.get("describe", {}),
            "answer": entry.get("answer_provenance", {}),
            "judged_at": entry.get("judged_at"),
            "cache": {"hit": True, "original_cost": fields.get("cost")},
        }
        return [self._row(r, key, fields, provenance, 0.0) for r in requests]

    def failed(
        self, requests: Sequence[JudgeRequest], key: str, kind: str, message: str, attempts: int
    ) -> list[Judgment]:
        """`error` labels: no usable answer after `attempts` calls (the message is redacted)."""
        note = f"{kind}: {redact(message)}"[:500]
        provenance = {
            **self.describe,
            "error": {"kind": kind, "attempts": attempts},
            "judged_at": now_iso(),
        }
        return [self._row(r, key, {"status": "error"}, provenance, None, note) for r in requests]

    def no_text(self, skipped: Sequence[Skipped]) -> list[Judgment]:
        """`no_text` labels for skipped holes (written `unless_marked`: once per labeller)."""
        return [
            Judgment(
                qid=s.qid,
                doc_id=s.doc_id,
                grade=None,
                source="judge",
                labeller=self.labeller,
                status="no_text",
                level=s.level,
                note=s.reason,
                provenance={**self.describe, "judged_at": now_iso()},
                purpose=self.purpose,
            )
            for s in skipped
        ]
