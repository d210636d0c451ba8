"""judgepool: know whether a retrieval change made search better.

    import judgepool as jp
    db = jp.open("eval.duckdb")
    db.ingest_qrels("qrels.txt"); db.ingest_run("bm25.trec"); db.ingest_run("splade.trec")
    db.judge("offline")                       # fill the holes of the pool
    db.render_prompt("q1", "d7", model="openai/gpt-4o-mini").messages   # what a judge sends
    db.compare("bm25", "splade").deltas       # a polars DataFrame
    jp.doctor(model="openai/gpt-4o-mini").ok  # keys, price, offline model, schema, cache

The front door (`open`, `Database` and the results it returns) is imported on first use, so that
`import judgepool` and the `judgepool` command stay fast. The parts live in the repository's
folders and import under this one root: `judgepool.pooling` (the database: ingest, pools,
labels), `judgepool.judge` (judges that fill the holes), `judgepool.metrics` (measures,
intervals, comparisons) and `judgepool.ui` (the command and the dashboard).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgepool import errors
    from judgepool.api.database import Database, open
    from judgepool.api.doctor import doctor
    from judgepool.api.prompt import templates
    from judgepool.api.results import Comparison, Evaluation, JudgeReport, Pool

_LAZY = {
    "open": "judgepool.api.database",
    "Database": "judgepool.api.database",
    "Pool": "judgepool.api.results",
    "Evaluation": "judgepool.api.results",
    "Comparison": "judgepool.api.results",
    "JudgeReport": "judgepool.api.results",
    "doctor": "judgepool.api.doctor",
    "templates": "judgepool.api.prompt",
}

__all__ = [
    "Comparison",
    "Database",
    "Evaluation",
    "JudgeReport",
    "Pool",
    "doctor",
    "errors",
    "open",
    "templates",
]


def __dir__() -> list[str]:
    """The front door's names (they are imported lazily, so the module's dict is nearly empty)."""
    return sorted([*__all__, "__version__"])


def __getattr__(name: str) -> Any:
    """Import the front door's names on first use."""
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("judgepool")
        except metadata.PackageNotFoundError:  # a checkout used without installing it
            return "0+unknown"
    if name == "errors":
        import judgepool.errors as module

        return module
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'judgepool' has no attribute {name!r}")
