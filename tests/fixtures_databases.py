"""Fixtures: databases built once per test session and copied into every test that asks again.

Building even a small collection costs 0.5-2 s (ten migrations, then each ingest opens the file
and checks its input); copying it costs milliseconds. `prebuilt(build)` runs `build` the usual
way, in the test's own tmp_path, the first time it is asked for in a session (a process: each
pytest-xdist worker builds its own), and keeps every file the build wrote there (inputs,
database, cache). Every later test asking for the same build gets those files copied into its
tmp_path, and in each DuckDB file among them every path of the first test's folder (source
files, provenance) is rewritten to its own folder. The copy is the same database at the same schema
version, with the same rows, sequences and files beside it, and no lock held: a copied file is
closed, and DuckDB's lock lives in the process that opens a file, not in the file. Only the
timestamps are those of the first build, a little earlier than a build of its own would write.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from judgepool.pooling.store.connection import Store
from tests.dashboard_db import build as build_dashboard_collection

if TYPE_CHECKING:
    import duckdb

Writer = Callable[[str, str | bytes], Path]
_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


Columns = tuple[tuple[str, str], ...]  # (table, column) pairs


@dataclass(frozen=True)
class _Template:
    origin: Path  # the tmp_path of the test that built it
    kept: Path  # the folder its files are kept in
    files: tuple[Path, ...]  # relative to origin and kept
    # per DuckDB file, the columns that hold a path of `origin`: found at the first copy (every
    # copy has the same content), so later copies skip the search
    holding: dict[Path, Columns] = field(default_factory=dict)


def _files(folder: Path) -> dict[Path, tuple[int, int]]:
    """Every file under `folder` with its (mtime, size): what a build changed shows in it."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            found[path.relative_to(folder)] = (stat.st_mtime_ns, stat.st_size)
    return found


def _is_duckdb(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(12)[8:12] == _DUCKDB_MAGIC


def relocate(db: Path, old: Path, new: Path, holding: Columns | None = None) -> Columns:
    """Rewrite the folder `old` and every `old/...` path recorded in the database `db` to `new`:
    in each text and JSON column of each table, whatever the schema holds now; or only in the
    columns `holding`, when a copy of the same file found them before. The columns it changed."""
    folder = {"old": str(old), "new": str(new), "was": f"{old}/", "now": f"{new}/"}
    # Through the store's own open path (an attach, ~5 ms; a connect of its own is ~30 ms):
    # one transaction, and the file is the judgepool database it must be.
    with Store(db).write() as con:
        if holding is None:
            holding = _holding(con, folder)
        for table, column in holding:
            con.execute(
                f'UPDATE "{table}" SET "{column}" = CASE WHEN {_text(column)} = $old THEN $new '
                f"ELSE replace({_text(column)}, $was, $now) END WHERE {_holds(column)}",
                folder,
            )
    return holding


def _text(column: str) -> str:
    return f'CAST("{column}" AS VARCHAR)'


def _holds(column: str) -> str:
    return f"({_text(column)} = $old OR contains({_text(column)}, $was))"


def _holding(con: duckdb.DuckDBPyConnection, folder: dict[str, str]) -> Columns:
    """The text and JSON columns of every table that hold the folder or a path in it."""
    columns = con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' "
        "AND data_type IN ('VARCHAR', 'JSON')"
    ).fetchall()
    if not columns:
        return ()
    # One query finds the columns that hold a path (a few of them), then only those change.
    counts = " UNION ALL ".join(
        f"SELECT '{table}', '{column}', count_if({_holds(column)}) FROM \"{table}\""
        for table, column in columns
    )
    found = con.execute(
        f"SELECT * FROM ({counts}) WHERE #3 > 0", {"old": folder["old"], "was": folder["was"]}
    ).fetchall()
    return tuple((table, column) for table, column, _ in found)


class Prebuilt:
    """`prebuilt(build, *variant)`: run `build` in this test's tmp_path, or copy what it wrote
    there the first time in this session. A build is known by where it is defined and by
    `variant` (whatever else it depends on: a parameter); it must write only under tmp_path."""

    def __init__(self, templates: dict[object, _Template], keep: Path, here: Path) -> None:
        self._templates = templates
        self._keep = keep
        self._here = here

    def __call__(self, build: Callable[[], object], *variant: object) -> None:
        code = build.__code__
        key = (code.co_filename, code.co_qualname, code.co_firstlineno, *variant)
        template = self._templates.get(key)
        if template is None:
            self._templates[key] = self._build(build)
            return
        for name in template.files:
            if (self._here / name).exists():
                raise FileExistsError(f"{self._here / name} is there before the copy of a build")
        for name in template.files:
            (self._here / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(template.kept / name, self._here / name)
        for name in template.files:
            if name.suffix != ".wal" and _is_duckdb(self._here / name):
                found = template.holding.get(name)
                holding = relocate(self._here / name, template.origin, self._here, found)
                template.holding[name] = holding

    def _build(self, build: Callable[[], object]) -> _Template:
        before = _files(self._here)
        build()
        after = _files(self._here)
        written = tuple(sorted(name for name, seen in after.items() if before.get(name) != seen))
        kept = self._keep / str(len(self._templates))
        for name in written:
            (kept / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self._here / name, kept / name)
        return _Template(self._here, kept, written)


@pytest.fixture(scope="session")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[object, _Template], Path]:
    return {}, tmp_path_factory.mktemp("prebuilt")


@pytest.fixture
def prebuilt(_templates: tuple[dict[object, _Template], Path], tmp_path: Path) -> Prebuilt:
    """Build a database in tmp_path once per session, or copy that build here."""
    templates, keep = _templates
    return Prebuilt(templates, keep, tmp_path)


@pytest.fixture
def store(prebuilt: Prebuilt, write: Writer) -> Store:
    """The worked-out collection of tests/dashboard_db.py at $JUDGEPOOL_DB (tmp_path/test.duckdb),
    with its input files beside it: what most dashboard, export and refusal tests read."""
    prebuilt(lambda: build_dashboard_collection(Store(), write))
    return Store()
