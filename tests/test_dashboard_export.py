"""Dashboard, Export page (AppTest): the download is byte for byte `judgepool export qrels`."""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from judgepool.pooling.export import export_labels
from judgepool.pooling.store.connection import Store
from tests.conftest import CliResult
from tests.dashboard_db import open_page, texts_of

Cli = Callable[..., CliResult]


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """file name -> bytes of every file the page handed to Streamlit's media storage."""
    seen: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self: Any, data: Any, mimetype: str, kind: Any, filename: str | None = None) -> str:
        if isinstance(data, bytes) and filename is not None:
            seen[filename] = data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


def command_of(at: Any) -> list[str]:
    """The `judgepool export qrels ...` command the page shows, as arguments (without judgepool)."""
    (command,) = [c for c in texts_of(at, "code") if c.startswith("judgepool ")]
    return shlex.split(command)[1:]


@pytest.mark.parametrize(("source", "fmt"), [("effective", "trec"), ("judge", "jsonl")])
def test_download_equals_the_cli_output(
    store: Store, cli: Cli, downloads: dict[str, bytes], tmp_path: Path, source: str, fmt: str
) -> None:
    at = open_page("export")
    at.radio(key="export_source").set_value(source)
    at.radio(key="export_format").set_value(fmt).run()
    assert not at.exception, [e.value for e in at.exception]
    name = f"qrels.chunk.{source}.{'txt' if fmt == 'trec' else 'jsonl'}"
    payload = downloads[name]
    assert payload == export_labels(store, source=source, fmt=fmt)
    args = command_of(at)
    assert args[args.index("-o") + 1] == name
    done = cli(*args)
    assert done.code == 0, done.err
    assert (tmp_path / name).read_bytes() == payload
    digest = hashlib.sha256(payload).hexdigest()
    lines = payload.count(b"\n")
    assert f"{lines} labels, {len(payload)} bytes, chunk level, sha256 {digest}" in texts_of(
        at, "text"
    )
    assert at.get("download_button")[0].proto.label == f"Download {name} ({lines} labels)"


def test_trec_content_and_preview(store: Store, downloads: dict[str, bytes]) -> None:
    at = open_page("export")
    payload = downloads["qrels.chunk.effective.txt"]
    lines = payload.decode().splitlines()
    assert len(lines) == 66 and lines[0] == "q1 0 q1-d00 3" and "q6 0 q6-d10 2" in lines
    assert "\n".join(lines[:12]) in texts_of(at, "code")  # the preview: the first 12 lines


def test_jsonl_download_carries_provenance(
    store: Store, downloads: dict[str, bytes], tmp_path: Path
) -> None:
    at = open_page("export")
    at.radio(key="export_format").set_value("jsonl").run()
    records = [json.loads(x) for x in downloads["qrels.chunk.effective.jsonl"].splitlines()]
    judge = [r for r in records if r["source"] == "judge"]
    assert len(records) == 66 and len(judge) == 6
    assert all(r["provenance"]["model"] == "openai/gpt-4o-mini" for r in judge)
    qrels_file = str(tmp_path / "qrels.txt")
    assert all(r["provenance"] == {"file": qrels_file} for r in records if r["source"] == "human")


def test_the_sidebar_judge_and_level_reach_the_export(
    store: Store, downloads: dict[str, bytes]
) -> None:
    at = open_page("export")
    at.radio(key="level").set_value("doc").run()
    assert downloads["qrels.chunk.effective.txt"]
    assert downloads.get("qrels.doc.effective.txt") in (b"", None)
    assert "0 labels, 0 bytes, doc level" in " ".join(texts_of(at, "text"))
    assert "--level doc" in " ".join(texts_of(at, "code"))
