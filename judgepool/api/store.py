"""The database handle as the api hands it to the CLI and the dashboard: every service function
takes a `Store` first, and the layers above the api reach it only from here."""

from __future__ import annotations

from judgepool.pooling.store.connection import (
    DEFAULT_DB,
    ENV_DB,
    ENV_LOCK_TIMEOUT,
    Store,
    resolve_db_path,
)

__all__ = ["DEFAULT_DB", "ENV_DB", "ENV_LOCK_TIMEOUT", "Store", "resolve_db_path"]
