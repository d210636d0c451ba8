"""The source text: the Python Language Reference topics shipped in CPython's pydoc_data.

The text differs between Python versions, so the build pins the exact text it was made from
(a sha256 over the topics dict) and refuses to regenerate from different text unless forced:
the committed outputs, and the hand-written answer sentences and labels, belong to this text.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass

# The text the committed outputs were built from (Python 3.11.7's pydoc_data.topics).
EXPECTED_PYTHON = "3.11.7"
EXPECTED_TOPICS_SHA256 = "4594d824487ea711258725d3dd158b2a0bfdea6bccd9f358421913684e2dfcfd"


@dataclass(frozen=True)
class Doc:
    """One Reference topic: the retrieval unit that labels are given for."""

    doc_id: str
    title: str
    text: str


class SourceMismatchError(RuntimeError):
    """The running Python ships different Reference text than the committed outputs."""


def python_version() -> str:
    """The running interpreter's version as 'X.Y.Z'."""
    return "{}.{}.{}".format(*sys.version_info[:3])


def topics_sha256(topics: dict[str, str]) -> str:
    """A stable fingerprint of the whole topics dict (key order does not matter)."""
    blob = json.dumps(topics, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def load_topics(force: bool = False) -> tuple[dict[str, str], str]:
    """Return (topics, sha256); raise SourceMismatchError if the text is not the pinned one."""
    from pydoc_data.topics import topics

    sha = topics_sha256(topics)
    if sha != EXPECTED_TOPICS_SHA256 and not force:
        raise SourceMismatchError(
            f"pydoc_data.topics of Python {python_version()} differs from the text the committed "
            f"demo collection was built from (Python {EXPECTED_PYTHON}, topics sha256 "
            f"{EXPECTED_TOPICS_SHA256[:12]}..., found {sha[:12]}...). Regenerating would silently "
            "change docs, chunks, runs and invalidate the hand-written answer sentences and "
            "labels. Use the committed files, run with Python "
            f"{EXPECTED_PYTHON}, or pass --force to build a different collection anyway."
        )
    return dict(topics), sha


def title_of(text: str) -> str:
    """The topic's first heading line (every topic starts with a '*'-underlined title)."""
    first, second = text.split("\n", 2)[:2]
    if not second or set(second) != {"*"}:
        raise ValueError(f"topic does not start with a '*'-underlined title: {first!r}")
    return first.strip()


def make_docs(topics: dict[str, str]) -> list[Doc]:
    """One Doc per topic key, sorted by id, with the full topic text kept verbatim."""
    return [Doc(k, title_of(topics[k]), topics[k]) for k in sorted(topics)]
