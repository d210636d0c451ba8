"""A database copied by `prebuilt` (tests/fixtures_databases.py) reads as one built in place.

Most tests start from a copy of a build made once per session; if the copy differed from a fresh
build (a path of another test's folder, a sequence, a missing input file), those tests would
check something other than what they say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from judgepool.pooling.store.connection import Store
from judgepool.pooling.store.judgments import Judgment, write_judgments
from judgepool.pooling.store.schema import SCHEMA_VERSION
from tests.dashboard_db import build
from tests.fixtures_databases import Prebuilt

Rows = dict[str, list[tuple[object, ...]]]


def contents(folder: Path) -> Rows:
    """Every row of every table of folder/test.duckdb in stored order, timestamps left out and
    the folder's own path written as <here>."""
    con = duckdb.connect(str(folder / "test.duckdb"), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        found: Rows = {}
        for table in sorted(tables):
            kept = [
                name
                for name, kind in con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE table_name = ? ORDER BY ordinal_position",
                    [table],
                ).fetchall()
                if not kind.startswith("TIMESTAMP")
            ]
            rows = con.execute(f'SELECT {", ".join(kept)} FROM "{table}"').fetchall()
            found[table] = [
                tuple(v.replace(str(folder), "<here>") if isinstance(v, str) else v for v in row)
                for row in rows
            ]
        return found
    finally:
        con.close()


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix != ".duckdb"
    }


def test_a_copy_equals_a_fresh_build_but_for_timestamps(tmp_path: Path) -> None:
    where = {"folder": tmp_path}

    def write(name: str, content: str | bytes) -> Path:
        path = where["folder"] / name
        path.write_text(content) if isinstance(content, str) else path.write_bytes(content)
        return path

    def build_here() -> None:
        build(Store(where["folder"] / "test.duckdb"), write)

    templates: dict[object, Any] = {}
    first, copy, fresh = (tmp_path / name for name in ("first", "copy", "fresh"))
    for folder in (first, copy, fresh):
        folder.mkdir()
    where["folder"] = first
    Prebuilt(templates, tmp_path / "kept", first)(build_here)
    where["folder"] = copy
    Prebuilt(templates, tmp_path / "kept", copy)(build_here)
    where["folder"] = fresh
    build_here()

    assert files(copy) == files(fresh) and "base.trec" in files(copy)
    copied, built = contents(copy), contents(fresh)
    assert copied == built and copied["runs"] and copied["judgments"]
    # The copy names its own files: nothing points at the folder it was built in.
    runs = dict(r[:1] + r[2:3] for r in copied["runs"])
    assert runs == {run: f"<here>/{run}.trec" for run in ("base", "cand", "weak")}
    assert str(first) not in repr(contents(copy))
    # The same schema version, and the sequence goes on where a fresh build's does.
    assert Store(copy / "test.duckdb").schema_version() == SCHEMA_VERSION
    for folder in (copy, fresh):
        write_judgments(Store(folder / "test.duckdb"), [Judgment("q1", "q1-d14", 1, "human", "me")])
    assert contents(copy)["judgments"] == contents(fresh)["judgments"]


def test_a_build_is_copied_only_into_a_folder_without_its_files(tmp_path: Path) -> None:
    def build_here() -> None:
        (here / "made.txt").write_text("made")

    templates: dict[object, Any] = {}
    here = tmp_path / "first"
    here.mkdir()
    Prebuilt(templates, tmp_path / "kept", here)(build_here)
    here = tmp_path / "second"
    here.mkdir()
    (here / "made.txt").write_text("already there")
    with pytest.raises(FileExistsError, match=r"made\.txt"):
        Prebuilt(templates, tmp_path / "kept", here)(build_here)
