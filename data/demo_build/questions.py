"""The hand-written question pairs (data/questions.jsonl) and the topics file made from them.

Each pair is one information need asked twice: in the Reference's own terminology ('ref') and
as a user's support ticket would say it ('ticket'). Both phrasings share the need, so they
share the answer and the relevance labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .jsonio import read_jsonl
from .source import Doc

PHRASINGS = ("ref", "ticket")
_FIELDS = {"ref": "reference", "ticket": "ticket"}
_PAIR_ID = re.compile(r"^q\d{2}$")


@dataclass(frozen=True)
class QuestionPair:
    """One need: its id, the answering topic and verbatim sentence, and two phrasings."""

    pair: str
    answer_doc: str
    answer_sentence: str
    reference: str
    ticket: str

    def qid(self, phrasing: str) -> str:
        """Query id such as 'q01-ref' or 'q01-ticket'."""
        return f"{self.pair}-{phrasing}"

    def text(self, phrasing: str) -> str:
        """The query text for a phrasing."""
        return str(getattr(self, _FIELDS[phrasing]))


class QuestionError(ValueError):
    """questions.jsonl is malformed or an answer sentence is not in its document."""


def load_questions(path: Path, docs: list[Doc]) -> list[QuestionPair]:
    """Load and verify: ids well-formed and unique, texts TSV-safe, and every answer sentence
    found verbatim (with `in`) in its answer document's text."""
    by_id = {d.doc_id: d for d in docs}
    pairs: list[QuestionPair] = []
    problems: list[str] = []
    for row in read_jsonl(path):
        q = QuestionPair(**row)
        if not _PAIR_ID.match(q.pair):
            problems.append(f"{q.pair}: pair id must look like q01")
        if q.answer_doc not in by_id:
            problems.append(f"{q.pair}: unknown answer_doc {q.answer_doc!r}")
        elif q.answer_sentence not in by_id[q.answer_doc].text:
            problems.append(f"{q.pair}: answer_sentence not found verbatim in {q.answer_doc!r}")
        for ph in PHRASINGS:
            t = q.text(ph)
            if not t.strip() or any(c in t for c in "\t\r\n"):
                problems.append(f"{q.pair}-{ph}: query text empty or contains tab/newline")
        pairs.append(q)
    ids = [q.pair for q in pairs]
    if len(set(ids)) != len(ids):
        problems.append("duplicate pair ids")
    if problems:
        raise QuestionError("questions.jsonl failed verification:\n  " + "\n  ".join(problems))
    return sorted(pairs, key=lambda q: q.pair)


def query_list(pairs: list[QuestionPair]) -> list[tuple[str, str]]:
    """(qid, text) for every phrasing, ordered q01-ref, q01-ticket, q02-ref, ..."""
    return [(q.qid(ph), q.text(ph)) for q in pairs for ph in PHRASINGS]


def topics_tsv(queries: list[tuple[str, str]]) -> str:
    """qid<TAB>text lines."""
    return "".join(f"{qid}\t{text}\n" for qid, text in queries)


def pair_of(qid: str) -> str:
    """'q07-ticket' -> 'q07'."""
    return qid.split("-", 1)[0]
