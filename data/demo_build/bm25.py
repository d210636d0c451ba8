"""A small, self-contained BM25 (Robertson/Lucene variant) so the runs need no search engine.

Parameters k1=0.9, b=0.4 (the Anserini defaults). idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
which is never negative. Each distinct query term counts once. Tokens are lowercase ASCII
alphanumeric runs; a tiny English stopword list is removed, but never a Python keyword
('for', 'in', 'is', 'not', 'with', ... carry meaning in questions about Python).
"""

from __future__ import annotations

import keyword
import math
import re
from collections import Counter

K1 = 0.9
B = 0.4
_TOKEN = re.compile(r"[a-z0-9]+")
_KEYWORDS = {k.lower() for k in [*keyword.kwlist, *keyword.softkwlist]}
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "be",
        "been",
        "am",
        "was",
        "were",
        "are",
        "do",
        "does",
        "did",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "there",
        "than",
        "so",
        "on",
        "at",
        "by",
        "into",
        "about",
        "which",
        "what",
        "how",
        "why",
        "can",
        "could",
        "would",
        "should",
        "will",
        "has",
        "have",
        "had",
        "but",
        "also",
        "just",
        "some",
        "any",
        "all",
        "s",
        "t",
    }
    - _KEYWORDS
)


def tokenize(text: str) -> list[str]:
    """Lowercase alphanumeric tokens minus stopwords (Python keywords are always kept)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25Index:
    """An in-memory inverted index over a fixed list of (id, text) passages."""

    def __init__(self, ids: list[str], texts: list[str], k1: float = K1, b: float = B) -> None:
        self.ids = ids
        self.k1, self.b = k1, b
        self.lengths: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, text in enumerate(texts):
            tf = Counter(tokenize(text))
            self.lengths.append(sum(tf.values()))
            for term in sorted(tf):
                self.postings.setdefault(term, []).append((i, tf[term]))
        self.n = len(ids)
        self.avgdl = sum(self.lengths) / self.n

    def idf(self, term: str) -> float:
        """Non-negative Lucene idf."""
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> dict[int, float]:
        """Scores of every passage sharing at least one term with the query."""
        out: dict[int, float] = {}
        for term in sorted(set(tokenize(query))):
            idf = self.idf(term)
            for i, tf in self.postings.get(term, ()):
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[i] / self.avgdl)
                out[i] = out.get(i, 0.0) + idf * tf * (self.k1 + 1.0) / (tf + norm)
        return out

    def search(self, query: str) -> list[tuple[str, float]]:
        """All matching passages as (id, score); ordering is left to the run writer."""
        return [(self.ids[i], s) for i, s in sorted(self.scores(query).items())]
