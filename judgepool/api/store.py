"""The database handle as the api hands it to the CLI and the dashboard: every service function
takes a `Store` first, and the layers above the api reach it only from here."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from judgepool.pooling.store.connection import (
    DEFAULT_DB,
    ENV_DB,
    ENV_LOCK_TIMEOUT,
    Store,
    resolve_db_path,
)

__all__ = ["DEFAULT_DB", "ENV_DB", "ENV_LOCK_TIMEOUT", "Store", "holding", "resolve_db_path"]


def holding(store: Store) -> AbstractContextManager[object]:
    """One read connection held across several api calls (a command's default level, then its
    figures): the calls inside share it instead of opening the file each (a DuckDB open and its
    schema check are a fair part of a short command). Nothing is held when there is no database
    file yet: the calls inside then say so themselves."""
    return store.read() if store.exists() else nullcontext()
