"""Embeddings cached on disk by content: a text is encoded once per model, whatever its ids.

Keys are `emb1:<model key>:<content hash of the normalised text>`; values the float32 vector
as bytes. The model key hashes the model's files, the precision and the input cut, so a new
model or setting never reads another's vectors. The store is diskcache (SQLite, safe for
several processes at once) at $JUDGEPOOL_CACHE_DIR/offline-embeddings, next to the judge cache.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from judgepool.host import naming_sqlite
from judgepool.judge.cache import open_disk_cache
from judgepool.pooling.io.text import content_hash, normalise

KEY_VERSION = "emb1"


class TextEncoder(Protocol):
    """Anything that turns texts into unit-length float32 rows (judge.offline.model.Encoder)."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@dataclass
class EmbedStats:
    """What one `embed` call did: texts asked, found in the cache, encoded, and the time taken."""

    texts: int = 0
    unique: int = 0
    cached: int = 0
    encoded: int = 0
    seconds: float = 0.0


def model_key(fingerprint: str, precision: str, max_seq_length: int | None) -> str:
    """The part of every embedding key that names the model and its settings."""
    raw = f"{fingerprint}|{precision}|{max_seq_length}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class EmbeddingCache:
    """Vectors by (model key, text content) on disk; also memoises model file digests."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory, self._cache = open_disk_cache(
            directory, "offline-embeddings", "embedding cache"
        )

    def get(self, key: str, default: Any = None) -> Any:
        """Any stored value (the model-file digest memo uses this)."""
        return self._cache.get(key, default)

    def __setitem__(self, key: str, value: Any) -> None:
        self._cache.set(key, value)

    def __len__(self) -> int:
        """Entries of every kind (vectors and file digests)."""
        return len(self._cache)

    def vectors(self, model: str, hashes: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The cached vectors among `hashes` (one transaction)."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        with self._cache.transact():
            for digest in hashes:
                raw = self._cache.get(f"{KEY_VERSION}:{model}:{digest}")
                if isinstance(raw, bytes):
                    found[digest] = np.frombuffer(raw, dtype=np.float32).copy()
        return found

    def store(self, model: str, rows: dict[str, npt.NDArray[np.float32]]) -> None:
        """Keep vectors (one transaction; a concurrent writer of the same key writes the same).
        A full disk is said as such, naming the cache's folder and its device."""
        with naming_sqlite(self.directory), self._cache.transact():
            for digest, vector in rows.items():
                self._cache.set(
                    f"{KEY_VERSION}:{model}:{digest}",
                    np.asarray(vector, dtype=np.float32).tobytes(),
                )

    def embedding_count(self, model: str | None = None) -> int:
        """How many vectors are stored (for one model key when given)."""
        prefix = f"{KEY_VERSION}:" if model is None else f"{KEY_VERSION}:{model}:"
        return sum(1 for key in self._cache if isinstance(key, str) and key.startswith(prefix))

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def embed(
    texts: Sequence[str],
    encoder: TextEncoder,
    cache: EmbeddingCache,
    model: str,
    batch: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, npt.NDArray[np.float32]], EmbedStats]:
    """Vectors of `texts` keyed by content hash: from the cache, the rest encoded and stored.

    Texts are encoded in their normalised form (the form the hash is of), in batches of `batch`
    stored as they finish, so an interrupted run keeps what it paid for. `progress(done, of)` is
    told before the first batch and after each (texts to encode, not those found cached).
    """
    started = time.perf_counter()
    by_hash: dict[str, str] = {}
    for text in texts:
        by_hash.setdefault(content_hash(text), text)
    found = cache.vectors(model, list(by_hash))
    # Longest first, so that each forward pass pads texts of similar length (and the slowest
    # part is done, and stored, first).
    missing = sorted((h for h in by_hash if h not in found), key=lambda h: -len(by_hash[h]))
    for start in range(0, len(missing), batch):
        if progress is not None:
            progress(start, len(missing))
        part = missing[start : start + batch]
        vectors = encoder.encode([normalise(by_hash[h]) for h in part])
        rows = {h: vectors[i] for i, h in enumerate(part)}
        cache.store(model, rows)
        found.update(rows)
    if progress is not None and missing:
        progress(len(missing), len(missing))
    stats = EmbedStats(
        len(texts),
        len(by_hash),
        len(by_hash) - len(missing),
        len(missing),
        time.perf_counter() - started,
    )
    return found, stats
