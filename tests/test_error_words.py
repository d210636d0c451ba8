"""One error object, two renderers: the library says a remedy with its parameters and calls
(`force=True`, `db.judge(...)`), the command line says the same error with flags and commands
(`--force`, `judgepool judge ...`), quoting what the shell needs quoted."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import judgepool as jp
from judgepool.errors import (
    Call,
    GateRefusedError,
    HostError,
    Param,
    Placeholder,
    UsageError,
    library_words,
    remedy,
)
from judgepool.host import host_error
from judgepool.reports.command_line import cli_words, command_line
from judgepool.ui.reporting import on_the_command_line
from tests.conftest import CliResult
from tests.judge_fixtures import CHUNKS, QRELS, QUERIES, RUN_A, RUN_B

Writer = Callable[[str, str | bytes], Path]


@pytest.fixture
def db(write: Writer, tmp_path: Path) -> jp.Database:
    """Two runs, A under the judged@10 gate (one doc of it has no label)."""
    database = jp.open(tmp_path / "eval.duckdb")
    database.ingest_queries(write("topics.tsv", QUERIES))
    chunks = "".join(
        json.dumps({"doc_id": d, "parent_id": p, "text": t}) + "\n" for d, p, t in CHUNKS
    )
    database.ingest_docs(write("chunks.jsonl", chunks))
    database.ingest_run(write("A.trec", RUN_A + "\n"))
    database.ingest_run(write("B.trec", RUN_B + "\n"))
    database.ingest_qrels(write("qrels.txt", QRELS))
    return database


def test_a_refused_comparison_says_force_true_to_the_library_and_force_to_the_cli(
    db: jp.Database, cli: Callable[..., CliResult]
) -> None:
    with pytest.raises(GateRefusedError) as caught:
        db.compare("A", "B")
    err = caught.value
    said = f"{err} {err.hint}"
    assert "force=True" in (err.hint or "") and "--" not in said
    assert "db.judge(depth=10" in (err.hint or "")  # the call that fills the holes, as Python
    assert err.value == ("A", "B")
    done = cli("--db", db.path, "compare", "A", "B")
    assert done.code == 3
    line = done.err
    assert "or pass --force to compare anyway" in line and "force=True" not in line
    assert f"judgepool --db {db.path} judge --depth 10" in line
    assert on_the_command_line(err) in line  # the same error, said once more the CLI's way


def test_an_unknown_level_says_level_chunk_to_the_library_and_level_chunk_flag_to_the_cli(
    db: jp.Database,
) -> None:
    with pytest.raises(UsageError) as caught:
        db.evaluate(level="docs")
    err = caught.value
    assert err.hint == 'use level="chunk" or level="doc"'
    assert "--" not in f"{err} {err.hint}" and err.value == "docs"
    # The command line's --level takes chunk|doc only (click refuses "docs" itself); the same
    # error object, rendered for it, speaks its flags:
    assert on_the_command_line(err) == "unknown level 'docs' — use --level chunk or --level doc"


def test_a_cli_refusal_keeps_its_flags_in_the_problem_too() -> None:
    with pytest.raises(UsageError) as caught:
        jp.open().compare("A", "B", fail_on="shrinkage")
    assert str(caught.value) == "unknown fail_on rule 'shrinkage'"
    assert "--" not in (caught.value.hint or "")
    assert on_the_command_line(caught.value).startswith("unknown --fail-on rule 'shrinkage' — ")


@pytest.mark.parametrize(
    ("part", "python", "shell"),
    [
        (Param("force"), "force=True", "--force"),
        (Param("level", "chunk"), 'level="chunk"', "--level chunk"),
        (Param("fail_on", None), "fail_on", "--fail-on"),
        (Param("labeller", "gpt x"), 'labeller="gpt x"', "--judge 'gpt x'"),
        (Param("runs", ("bm25", "my run")), 'runs=["bm25", "my run"]', "--run bm25 --run 'my run'"),
        (Param("max_calls", Placeholder("N")), "max_calls=N", "--max-calls N"),
        (Param("canaries", 0), "canaries=0", "--no-canaries"),
        (Param("gate", 0.9), "gate=0.9", "--gate 0.9"),
        (Param("name", 'it\'s "x"'), 'name="it\'s \\"x\\""', "--name 'it'\"'\"'s \"x\"'"),
        (Call.of("runs"), "db.runs()", "judgepool runs"),
        (Call.of("open", Placeholder("PATH")), "jp.open(PATH)", "--db PATH"),
        (
            Call.of("ingest_qrels", "my qrels.txt", labeller="ann"),
            'db.ingest_qrels("my qrels.txt", labeller="ann")',
            "judgepool ingest qrels 'my qrels.txt' --labeller ann",
        ),
        (
            Call.of("compare", "base", ("cand", "new run"), force=True, seed=None),
            'db.compare("base", ["cand", "new run"], force=True)',
            "judgepool compare base cand 'new run' --force",
        ),
        (
            Call.of("collect_batches", retry_failed=True),
            "db.collect_batches(retry_failed=True)",
            "judgepool judge --batch-collect --retry-failed",
        ),
        (
            Call.of("render_prompt", "q 1", "d1"),
            'db.render_prompt("q 1", "d1")',
            "judgepool prompt render --qid 'q 1' --doc d1",
        ),
    ],
)
def test_a_part_said_both_ways(part: Param | Call, python: str, shell: str) -> None:
    assert library_words(part) == python
    assert cli_words(part) == shell


def test_a_call_on_a_database_names_it_on_the_command_line_only() -> None:
    call = Call.of(
        "judge", depth=10, runs=("bm25", "my run"), labeller=None, model=Placeholder("MODEL")
    ).on("/data/my evals/eval.duckdb")
    assert library_words(call) == 'db.judge(depth=10, runs=["bm25", "my run"], model=MODEL)'
    line = command_line(call)
    assert line == (
        "judgepool --db '/data/my evals/eval.duckdb' judge --depth 10 --run bm25 "
        "--run 'my run' --model MODEL"
    )
    assert shlex.split(line)[:3] == ["judgepool", "--db", "/data/my evals/eval.duckdb"]
    assert command_line(call, Param("dry_run")).endswith(" --model MODEL --dry-run")


def test_a_report_command_says_the_default_measures_by_their_options() -> None:
    custom_rels = ("nDCG@10", "R(rel=2)@10", "nR@10", "Judged@10")
    assert command_line(Call.of("compare", "a", ("b",), measures=custom_rels)) == (
        "judgepool compare a b --key-rel 2"
    )
    other = ("nDCG@5", "RR@10")
    assert command_line(Call.of("compare", "a", ("b",), k=5, measures=other)) == (
        "judgepool compare a b --k 5 --measure nDCG@5 --measure RR@10"
    )


def test_sentences_compose_with_their_parts_and_keep_literal_braces() -> None:
    said = "run {x} failed: " + remedy("pass {}", Param("force")) + " {not a part}"
    assert str(said) == "run {x} failed: pass force=True {not a part}"
    assert said.render(cli_words) == "run {x} failed: pass --force {not a part}"
    err = UsageError(remedy("{} is negative", Param("max_cost", -1.0)), "give 0 or more")
    assert str(err) == err.what == "max_cost=-1.0 is negative"
    assert err.say(cli_words) == ("--max-cost -1 is negative", "give 0 or more")


def test_the_machine_s_refusals_name_the_database_and_the_output_both_ways() -> None:
    import errno

    found = host_error(OSError(errno.ENOSPC, "No space left on device", "/full/x.duckdb"))
    assert isinstance(found, HostError) and found.value == "/full/x.duckdb"
    assert "jp.open(PATH) / JUDGEPOOL_DB" in (found.hint or "")
    assert "db.export_qrels(PATH) for an export" in (found.hint or "")
    cli_hint = found.say(cli_words)[1] or ""
    assert "--db PATH / JUDGEPOOL_DB" in cli_hint
    assert "judgepool export qrels -o PATH for an export" in cli_hint
    assert "JUDGEPOOL_CACHE_DIR" in cli_hint
    memory = host_error(OSError(errno.ENOMEM, "Cannot allocate memory", "x"))
    assert memory is not None and "runs=[NAME]" in (memory.hint or "")
    assert "--run NAME" in (memory.say(cli_words)[1] or "")
