"""The database file: where it is, short scoped connections to it, and its migrations.

DuckDB lets one process at a time hold a database file for writing, and while it does, no other
process can open the file at all (not even read-only). judgepool therefore never keeps the file
open: every `Store.read()` / `Store.write()` opens it, does one short piece of work, and closes it.
A process that finds the file locked by another one retries with jittered backoff for up to
`JUDGEPOOL_LOCK_TIMEOUT` seconds (default 60) before raising `DatabaseBusyError`. Long jobs (the
judge) write in small, quick transactions, so the dashboard and `eval` stay usable while they run.

Inside one process, concurrent users of the same file share one attachment of it, which is
detached as soon as its last user is done: that releases the file lock for other processes.
Files are attached to one in-memory DuckDB instance per process, kept for the process's life.
Creating an instance costs about 17 ms of CPU (DuckDB builds its catalog of built-in functions),
an ATTACH and DETACH about 2 ms, and a command or a judge's flush opens the file several times.
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from judgepool.errors import (
    Call,
    DatabaseBusyError,
    DatabaseError,
    Placeholder,
    Remedy,
    remedy,
)
from judgepool.host import host_error
from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    import duckdb

DEFAULT_DB = "judgepool.duckdb"
ENV_DB = "JUDGEPOOL_DB"
ENV_LOCK_TIMEOUT = "JUDGEPOOL_LOCK_TIMEOUT"
# What to do when there is no database (yet): the calls, said in the caller's terms.
_FILE = Placeholder("FILE")
_OPEN = Call.of("open", Placeholder("PATH"))
_INGESTS = tuple(Call.of(f"ingest_{what}", _FILE) for what in ("queries", "docs", "qrels", "run"))
_START: Remedy = remedy("start with one of `{}`, `{}`, `{}`, `{}`", *_INGESTS)
_CREATE: Remedy = remedy(
    "create it with an ingest (`{}` ...), or name the one you meant ({} / JUDGEPOOL_DB)",
    _INGESTS[3],
    _OPEN,
)


def resolve_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The database path: the explicit one, else $JUDGEPOOL_DB, else ./judgepool.duckdb."""
    chosen = explicit if explicit not in (None, "") else os.environ.get(ENV_DB) or DEFAULT_DB
    return Path(chosen).expanduser()


def utcnow() -> datetime:
    """Timestamps are stored naive in UTC (DuckDB TIMESTAMP), taken from one place."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class _Attached:
    """One database file attached to this process's engine, under its own alias."""

    alias: str
    read_only: bool

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A connection of its own whose unqualified names mean this file's tables."""
        cursor = _engine().cursor()
        cursor.execute(f'USE "{self.alias}"')
        return cursor

    def detach(self) -> None:
        """Checkpoint and release the file, as closing a connection to it would."""
        import duckdb

        try:
            _engine().execute(f'DETACH "{self.alias}"')
        except duckdb.Error as err:
            # Detached, but its checkpoint failed (a full disk): what committed stays in the WAL,
            # which the next open replays. Closing a connection ignores this the same way; the
            # transaction's own error, if any, is the one to report.
            if not str(err).startswith(f"IO Error: Detached database '{self.alias}'"):
                raise


@dataclass
class _Shared:
    con: _Attached
    read_only: bool
    users: int


_registry: dict[Path, _Shared] = {}
_registry_cond = threading.Condition()
_engines: list[duckdb.DuckDBPyConnection] = []  # this process's one instance, once made
_aliases = itertools.count()


def _engine() -> duckdb.DuckDBPyConnection:
    """This process's in-memory DuckDB instance, which database files are attached to."""
    if not _engines:
        import duckdb

        _engines.append(duckdb.connect(":memory:"))
    return _engines[0]


def _lock_timeout() -> float:
    raw = os.environ.get(ENV_LOCK_TIMEOUT, "60")
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise DatabaseError(
            f"{ENV_LOCK_TIMEOUT}={raw!r} is not a number of seconds",
            f"set {ENV_LOCK_TIMEOUT} to e.g. 60, or unset it",
        ) from None


def _is_lock_conflict(err: Exception) -> bool:
    text = str(err).lower()
    held_here = "unique file handle conflict" in text  # a connection of this process's own
    return held_here or ("lock" in text and ("conflicting" in text or "could not set" in text))


def _attach(path: Path, read_only: bool) -> _Attached:
    """Attach the file to the engine (creating it when writing), as `duckdb.connect` opens it."""
    attached = _Attached(f"judgepool_{next(_aliases)}", read_only)
    quoted = str(path).replace("'", "''")
    engine = _engine()
    if not _registry:  # sorts too large for memory spill beside the file, as a file's own do
        engine.execute(f"SET temp_directory = '{quoted}.tmp'")
    mode = ", READ_ONLY" if read_only else ""
    # TYPE duckdb: a file of another kind is refused as such, never handed to an extension.
    engine.execute(f"ATTACH '{quoted}' AS \"{attached.alias}\" (TYPE duckdb{mode})")
    return attached


def _open(path: Path, read_only: bool) -> _Attached:
    """Open the file, retrying while another process holds a conflicting lock."""
    import duckdb

    deadline = time.monotonic() + _lock_timeout()
    delay = 0.005
    while True:
        try:
            return _attach(path, read_only=read_only)
        except duckdb.Error as err:
            if not _is_lock_conflict(err):
                if not isinstance(err, duckdb.IOException):
                    raise
                raise host_error(err, places=[path]) or DatabaseError(
                    f"cannot open database {path}: {err}",
                    "check that the file is a judgepool DuckDB database and is readable",
                ) from err
            if time.monotonic() >= deadline:
                raise DatabaseBusyError(
                    f"database {path} is held by another process: {err}",
                    f"wait for it to finish, or raise {ENV_LOCK_TIMEOUT} (seconds)",
                ) from err
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.25)


def _applied_version(con: duckdb.DuckDBPyConnection) -> int:
    """The schema version recorded (0: no record). One query on every open: asking the catalog
    first whether the table exists cost a second query, twice as long as this one."""
    import duckdb

    try:
        row = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row else 0


def _table_count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_catalog = current_database()"
    ).fetchone()
    return int(row[0]) if row else 0


def _check_ours(con: duckdb.DuckDBPyConnection, path: Path, create: bool) -> int:
    """Refuse a DuckDB file that is not a judgepool database (another application's file must
    never get our tables), and an empty one unless this write may create the schema; the
    schema version found (0: none yet), which the caller needs and need not read again."""
    version = _applied_version(con)
    if version > 0:
        return version
    if _table_count(con) > 0:
        raise DatabaseError(
            f"{path} is a DuckDB file but not a judgepool database (it has tables of its own and "
            "no judgepool schema); nothing was changed in it",
            remedy("point {} / JUDGEPOOL_DB at a judgepool database, or at a new file name", _OPEN),
            value=str(path),
        )
    if not create:
        raise DatabaseError(
            f"database {path} is empty: nothing has been ingested into it yet",
            _START,
            value=str(path),
        )
    return 0


def _migrate(con: duckdb.DuckDBPyConnection, path: Path, create: bool) -> None:
    """Apply the migrations this database lacks; the schema itself is created only when
    `create` (an ingest into a new or empty file).

    A new database gets its whole schema in one transaction: one commit instead of one per
    migration (creating a database takes about two thirds of the time), and the schema comes
    whole or not at all. An older database gets each missing migration in a transaction of its
    own, so that a failure leaves it at a version it had."""
    version = _check_ours(con, path, create)
    if version > SCHEMA_VERSION:
        raise DatabaseError(
            f"database {path} has schema version {version}, newer than this judgepool's "
            f"({SCHEMA_VERSION})",
            "upgrade judgepool (pip install -U judgepool) to read it",
        )
    missing = [migration for migration in MIGRATIONS if migration.version > version]
    for group in [missing] if version == 0 else [[migration] for migration in missing]:
        con.execute("BEGIN TRANSACTION")
        try:
            if version == 0:
                con.execute(
                    "CREATE TABLE schema_migrations (version INTEGER NOT NULL, "
                    "name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
                )
            for migration in group:
                con.execute(migration.sql)
            now = utcnow()
            con.execute(
                "INSERT INTO schema_migrations VALUES " + ", ".join(["(?, ?, ?)"] * len(group)),
                [value for m in group for value in (m.version, m.name, now)],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise


class Store:
    """One judgepool database file; hands out short-lived connections to it.

    >>> store = Store("eval.duckdb")
    >>> with store.write(create=True) as con:  # one transaction; ingest may create the file
    ...     con.execute("INSERT INTO queries VALUES ('q1', 'text', NULL, now())")
    >>> with store.read() as con:       # read-only, released at the end of the block
    ...     con.execute("SELECT count(*) FROM queries").fetchone()
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = resolve_db_path(path)
        self._key = self.path.resolve()

    def exists(self) -> bool:
        """Whether the database file is there (it is created by the first write)."""
        return self.path.exists()

    def _acquire(self, read_only: bool, create: bool = False) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + _lock_timeout()
        with _registry_cond:
            while True:
                shared = _registry.get(self._key)
                if shared is None:
                    attached = _open(self.path, read_only=read_only)
                    version = SCHEMA_VERSION  # a writer migrates to it
                    try:
                        con = attached.cursor()
                        try:
                            if read_only:
                                version = _check_ours(con, self.path, create=False)
                            else:
                                _migrate(con, self.path, create)
                        finally:
                            con.close()
                    except Exception:
                        attached.detach()
                        raise
                    if read_only and version != SCHEMA_VERSION:
                        attached.detach()
                        self._upgrade_then_reopen()
                        continue
                    shared = _Shared(attached, read_only, 0)
                    _registry[self._key] = shared
                if shared.read_only and not read_only:
                    # A writer must wait until this process's readers are done with the file.
                    if time.monotonic() >= deadline:
                        raise DatabaseBusyError(
                            f"database {self.path} is still open for reading in this process",
                            "finish reading before writing (this is a bug if you see it)",
                        )
                    _registry_cond.wait(timeout=0.05)
                    continue
                shared.users += 1
                return shared.con.cursor()

    def _upgrade_then_reopen(self) -> None:
        attached = _open(self.path, read_only=False)
        try:
            con = attached.cursor()
            try:
                _migrate(con, self.path, create=False)
            finally:
                con.close()
        finally:
            attached.detach()

    def _release(self, cursor: duckdb.DuckDBPyConnection) -> None:
        cursor.close()
        with _registry_cond:
            shared = _registry[self._key]
            shared.users -= 1
            if shared.users == 0:
                del _registry[self._key]
                shared.con.detach()
            _registry_cond.notify_all()

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection for one short piece of work."""
        if not self.exists():
            raise DatabaseError(f"no database at {self.path}", _CREATE, value=str(self.path))
        cursor = self._acquire(read_only=True)
        try:
            yield cursor
        finally:
            self._release(cursor)

    @contextmanager
    def write(self, create: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection holding one transaction: all of it commits, or none of it.

        Only ingest passes `create=True`: it may make a new file (or fill an empty one) with the
        schema. Every other writer needs a judgepool database that exists.
        """
        if self.path.parent and not self.path.parent.exists():
            raise DatabaseError(
                f"the folder of database {self.path} does not exist",
                remedy("create that folder first, or choose another {}", _OPEN),
                value=str(self.path),
            )
        if not create and not self.exists():
            raise DatabaseError(f"no database at {self.path}", _CREATE, value=str(self.path))
        cursor = self._acquire(read_only=False, create=create)
        try:
            cursor.execute("BEGIN TRANSACTION")
            try:
                yield cursor
            except BaseException:
                with suppress(Exception):  # the transaction may already be aborted
                    cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        finally:
            self._release(cursor)

    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        with self.read() as con:
            return _applied_version(con)

    def recorded_version(self) -> int:
        """The schema version recorded in the file, read without upgrading it (0: an empty
        file, nothing ingested yet); what `judgepool doctor` reports. A DuckDB file of another
        application is a DatabaseError, as everywhere."""
        if not self.exists():
            raise DatabaseError(f"no database at {self.path}", _CREATE, value=str(self.path))
        with _registry_cond:  # no thread of this process opens the file meanwhile
            shared = _registry.get(self._key)
            attached = shared.con if shared is not None else _open(self.path, True)
            con = attached.cursor()
            try:
                return _check_ours(con, self.path, create=True)
            finally:
                con.close()
                if shared is None:
                    attached.detach()
