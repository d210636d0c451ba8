"""Labels to download, as the dashboard's Export page offers them: the exact bytes `judgepool
export qrels` writes (TREC qrels, or JSONL with every field and its provenance), and the file's
suggested name. Nothing is written here; an export of nothing is empty bytes.
"""

from __future__ import annotations

from judgepool.defaults import LEVEL, Level
from judgepool.pooling.export import EXPORT_FORMATS, EXPORT_SOURCES, export_file_name, export_labels
from judgepool.pooling.store.connection import Store

__all__ = ["EXPORT_FORMATS", "EXPORT_SOURCES", "file_name", "labels_bytes"]


def labels_bytes(
    store: Store,
    *,
    level: Level = LEVEL,
    source: str = "effective",
    labeller: str | None = None,
    fmt: str = "trec",
) -> bytes:
    """The labels of `source` (effective, human or judge) at `level` as `fmt` (trec or jsonl),
    ordered by qid then doc_id: the same database always gives the same bytes."""
    return export_labels(store, level=level, source=source, labeller=labeller, fmt=fmt)


def file_name(level: Level, source: str, fmt: str) -> str:
    """The suggested file name of a download, e.g. qrels.chunk.effective.txt."""
    return export_file_name(level, source, fmt)
