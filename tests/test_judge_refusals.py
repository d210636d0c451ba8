"""Every refusal of the judge says what to do (issue 11.21): in the code, each of our errors made
in judge/ or in the `judge` command carries a hint; through the CLI, each prints
`error: problem — what to do` and exits non-zero."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import PKG, REPO, CliResult
from tests.fake_openai import FakeOpenAI
from tests.judge_fixtures import collection_copy

Cli = Callable[..., CliResult]
#: Our errors and the position of their `hint` argument (InputError: path, problem, line, hint).
ERRORS = {
    "JudgepoolError": 1,
    "UsageError": 1,
    "DatabaseError": 1,
    "DatabaseBusyError": 1,
    "JudgeError": 1,
    "BudgetExceededError": 1,
    "HolesFailedError": 1,
    "NothingLabelledError": 1,
    "InputError": 3,
}


def _judge_sources() -> Iterator[Path]:
    yield from sorted((PKG / "judge").rglob("*.py"))
    yield from sorted((PKG / "ui" / "commands").glob("judge*.py"))


def _without_hint(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        position = ERRORS.get(node.func.id)
        if position is None:
            continue
        hinted = len(node.args) > position or any(k.arg == "hint" for k in node.keywords)
        if not hinted:
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.func.id}(...)")
    return found


def test_every_error_the_judge_makes_carries_what_to_do() -> None:
    sources = list(_judge_sources())
    assert len(sources) > 20  # the walk found the judge's modules
    missing = [place for path in sources for place in _without_hint(path)]
    assert missing == []


@pytest.mark.parametrize(
    ("args", "problem", "todo"),
    [
        (("--model", "gpt-4o-mini"), "does not name a provider", "use a litellm model string"),
        (
            ("--model", "offline", "--temperature", "0.5"),
            "--temperature apply to LLM judges",
            "leave out --temperature",
        ),
        (
            ("--model", "openai/fake-model", "--max-cost", "1"),
            "its price is unknown",
            "cap it with --max-calls N instead",
        ),
        (
            ("--model", "offline:/nowhere"),
            "no model directory at /nowhere",
            "give a local sentence-transformers model folder",
        ),
    ],
)
def test_refusals_through_the_cli_say_what_to_do(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    fake: FakeOpenAI,
    cli: Cli,
    args: tuple[str, ...],
    problem: str,
    todo: str,
) -> None:
    collection_copy(tmp_path_factory, tmp_path / "test.duckdb")
    result = (
        cli("judge", "--api-base", fake.api_base, *args)
        if "offline" not in args[1]
        else cli("judge", *args)
    )
    assert result.code != 0
    line = next(x for x in result.err.splitlines() if x.startswith("error: "))
    assert problem in line and f" — {todo}" in line
    assert fake.calls == 0
