"""The library says what to do in its own terms: no CLI flag (`--force`) and no `judgepool ...`
command line in a string of library code (judgepool/ minus judgepool/ui), and every parameter
and call a remedy names (`Param("force")`, `Call.of("judge", ...)`) is one the CLI has a flag and
a command for, so that `judgepool.reports.command_line` can say it.

Docstrings are documentation, not messages: they may say what the CLI calls a thing. The
allow-list below is short and reviewed; each entry says why its text is not advice to a caller.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click

from judgepool.reports.command_line import ARG_FLAGS, COMMANDS, VALUE_FLAGS, flag
from judgepool.ui.cli import cli
from tests.conftest import PKG

FLAG = re.compile(r"(?<![\w-])--[a-z]")
# (file under judgepool/, a piece of the literal) -> why it may name the CLI.
ALLOWED: dict[tuple[str, str], str] = {
    ("reports/markdown.py", "**judgepool compare: "): "the report's title names the command "
    "whose output it is (a report is read by the people who ran it)",
    ("reports/html.py", "judgepool compare: "): "the HTML report's title, as the markdown one",
    ("judge/reasoning.py", "raise --max-tokens"): "stored in the database with the answer as "
    "its parse problem (provenance) and printed as stored; a stored string has no parts",
    ("judge/offline/model.py", "pip install --force-reinstall"): "pip's flag, not judgepool's",
}
# The one module that says flags and commands: the renderer of remedies and report commands.
RENDERER = "reports/command_line.py"


def _library_files() -> list[Path]:
    return [p for p in sorted(PKG.rglob("*.py")) if p.relative_to(PKG).parts[0] != "ui"]


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal of `path` (f-strings' literal pieces too), docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def _commands_of(group: click.Group) -> dict[str, click.Command]:
    """A group's subcommands by name (`judgepool` loads its own on first use)."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: sub for name, sub in found.items() if sub is not None}


def _command_line() -> re.Pattern[str]:
    """`judgepool <command>` for the CLI's real commands (and `judgepool --db`)."""
    names = "|".join(sorted(map(re.escape, _commands_of(cli)), key=len, reverse=True))
    return re.compile(rf"\bjudgepool (?:--db|{names})\b")


def test_no_cli_flag_or_command_line_in_library_strings() -> None:
    command = _command_line()
    found, used = [], set()
    for path in _library_files():
        where = path.relative_to(PKG).as_posix()
        if where == RENDERER:
            continue
        for line, text in _strings(path):
            if not (FLAG.search(text) or command.search(text)):
                continue
            allowed = [key for key in ALLOWED if key[0] == where and key[1] in text]
            used.update(allowed)
            if not allowed:
                found.append(f"judgepool/{where}:{line}: {text!r}")
    assert not found, "CLI words in library code (say them as Param/Call parts):\n" + "\n".join(
        found
    )
    assert used == set(ALLOWED), f"allow-list entries that match nothing: {set(ALLOWED) - used}"


def test_the_scan_sees_what_it_must_refuse(tmp_path: Path) -> None:
    """The scan is not blind: a flag or a command line in a message, an f-string's piece
    included, is found; the same words in a docstring are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Docstring: `judgepool judge --model X` is fine here."""\n'
        'def f(n):\n    """Nor here: --force."""\n'
        '    raise ValueError(f"pass --force {n}", "run `judgepool judge`")\n',
        encoding="utf-8",
    )
    said = [text for _, text in _strings(sample)]
    command = _command_line()
    assert sorted(t for t in said if FLAG.search(t) or command.search(t)) == [
        "pass --force ",
        "run `judgepool judge`",
    ]


# -- every part a remedy names has its flag and its command --------------------------------


def _commands() -> dict[str, click.Command]:
    """`ingest qrels` -> its click command, for every command of `judgepool`."""
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, words: list[str]) -> None:
        if isinstance(command, click.Group):
            for name, sub in _commands_of(command).items():
                walk(sub, [*words, name])
        else:
            found[" ".join(words)] = command

    walk(cli, [])
    return found


def _flags(command: click.Command) -> set[str]:
    return {
        o
        for p in command.params
        if isinstance(p, click.Option)
        for o in [*p.opts, *p.secondary_opts]
    }


def _parts() -> Iterator[tuple[str, str, str, list[str]]]:
    """(file, kind Param|Call, its name or verb, the keyword names of a Call) for every
    `Param("name", ...)` and `Call.of("verb", ...)` written with a literal name in library code."""
    for path in _library_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            func = node.func
            where = path.relative_to(PKG).as_posix()
            if isinstance(func, ast.Name) and func.id == "Param":
                yield where, "Param", first.value, []
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == "of"
                and isinstance(func.value, ast.Name)
                and func.value.id == "Call"
            ):
                keywords = [k.arg for k in node.keywords if k.arg is not None]
                yield where, "Call", first.value, keywords


def test_every_parameter_a_remedy_names_is_a_flag_of_the_cli() -> None:
    commands = _commands()
    every_flag = set().union(*map(_flags, commands.values())) | set(VALUE_FLAGS.values())
    params = [(where, name) for where, kind, name, _ in _parts() if kind == "Param"]
    assert len(params) > 40  # the scan finds them
    missing = [f"{w}: {n} -> {flag(n)}" for w, n in params if flag(n) not in every_flag]
    assert not missing, "parameters with no CLI flag:\n" + "\n".join(missing)


def test_every_call_a_remedy_names_is_a_command_with_those_flags() -> None:
    commands = _commands()
    calls = [(where, verb, keys) for where, kind, verb, keys in _parts() if kind == "Call"]
    assert len(calls) > 15
    wrong = []
    for where, verb, keys in calls:
        if verb == "open":  # the database: every command's --db
            continue
        words = COMMANDS.get(verb, verb.replace("_", " ")).split()
        name = " ".join(w for w in words if not w.startswith("-"))
        command = commands.get(name)
        if command is None:
            wrong.append(f"{where}: {verb} -> `judgepool {name}` is no command")
            continue
        flags = _flags(command)
        wanted = [w for w in words if w.startswith("-")] + list(ARG_FLAGS.get(verb, ()))
        wanted += [flag(k, verb) for k in keys]
        wrong += [f"{where}: {verb} -> {name} has no {f}" for f in wanted if f not in flags]
    assert not wrong, "calls the CLI cannot make:\n" + "\n".join(wrong)


def test_the_tables_name_real_commands_and_flags() -> None:
    commands = _commands()
    for verb, words in COMMANDS.items():
        name = " ".join(w for w in words.split() if not w.startswith("-"))
        assert name in commands, (verb, words)
        for option in [w for w in words.split() if w.startswith("-")]:
            assert option in _flags(commands[name]), (verb, option)
    for verb, options in ARG_FLAGS.items():
        if verb == "open":
            assert "--db" in _flags(cli)
            continue
        name = " ".join(w for w in COMMANDS[verb].split() if not w.startswith("-"))
        assert set(options) <= _flags(commands[name]), verb
