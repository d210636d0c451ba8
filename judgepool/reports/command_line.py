"""The `judgepool` command line of a remedy's parts and of a report's commands, said once.

The library says what to do as data (judgepool/errors.py: `Param("force")`,
`Call.of("judge", depth=10)`); this module says it as a user types it: a parameter as its flag
(`--force`, `--level chunk`, `--run 'my run'`), a call as the `judgepool ...` line that does the
same (`judgepool --db eval.duckdb judge --depth 10`). The CLI's errors (ui/reporting.py) and the
report files (read by the people who ran the command) both speak through `cli_words`, so a flag
is named in one place: the tables below, checked against the click commands by
tests/test_error_words.py.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from judgepool.errors import Call, Param, Part, Placeholder

# Library parameter -> flag, where the flag is not the name with dashes (`max_cost` ->
# `--max-cost`): the CLI says "judge" for a labeller, takes a run or a measure per flag ...
FLAGS: dict[str, str] = {
    "labeller": "--judge",
    "labellers": "--judge",
    "judges": "--judge",
    "runs": "--run",
    "measures": "--measure",
    "models": "--model",
    "api_bases": "--api-base",
    "from_run": "--from",
    "to_level": "--to",
    "doc_id": "--doc",
    "everything": "--all",
    "listing": "--list",
    "output": "-o",
    "submit_batch": "--batch",  # "without submit_batch": the same command without --batch
}
# The same, for one verb whose command names it otherwise (`ingest qrels --labeller NAME`).
VERB_FLAGS: dict[tuple[str, str], str] = {("ingest_qrels", "labeller"): "--labeller"}
# A parameter's value that the command says with a flag of its own (0 canaries: none at all).
VALUE_FLAGS: dict[tuple[str, object], str] = {("canaries", 0): "--no-canaries"}
# Database method -> the command's words, where they are not the name (`pool` -> `pool`).
COMMANDS: dict[str, str] = {
    "ingest_queries": "ingest queries",
    "ingest_docs": "ingest docs",
    "ingest_qrels": "ingest qrels",
    "ingest_run": "ingest run",
    "evaluate": "eval",
    "export_qrels": "export qrels",
    "set_floors": "floors set",
    "floors": "floors list",
    "check_floors": "floors check",
    "audit_sample": "audit sample",
    "audit_pairs": "audit sample --list",
    "audit_status": "audit status",
    "submit_batch": "judge --batch",
    "batches": "judge --batch-status",
    "collect_batches": "judge --batch-collect",
    "cancel_batch": "judge",
    "render_prompt": "prompt render",
    "templates": "prompt list",
    "lift_labels": "labels lift",
    "rank_judges": "judges rank",
    "rank_by_judge": "judges rank",
    "judges_agreement": "judges agreement",
}
# Positional arguments of a Database method that the command takes as options.
ARG_FLAGS: dict[str, tuple[str, ...]] = {
    "open": ("--db",),
    "export_qrels": ("-o",),
    "render_prompt": ("--qid", "--doc"),
    "cancel_batch": ("--batch-cancel",),
}


def flag(name: str, verb: str | None = None) -> str:
    """The flag of the library parameter `name` (of `verb`'s command, when given)."""
    if verb is not None and (verb, name) in VERB_FLAGS:
        return VERB_FLAGS[verb, name]
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def word(value: object) -> str:
    """One value as a shell word: quoted when it must be (`'my run'`), a placeholder as is."""
    if isinstance(value, Placeholder):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and float(f"{value:g}") == value:
        return f"{value:g}"  # 0 rather than 0.0, as a user types it
    return shlex.quote(str(value))


def option(name: str, value: object, verb: str | None = None) -> list[str]:
    """A parameter as the words of its flag: True a bare flag, False its `--no-` form, None the
    flag alone (a name in a sentence), a sequence the flag once per item."""
    said = flag(name, verb)
    if isinstance(value, int | str) and (name, value) in VALUE_FLAGS:
        return [VALUE_FLAGS[name, value]]
    if value is True or value is None:
        return [said]
    if value is False:
        return ["--no-" + said.removeprefix("--")]
    if isinstance(value, list | tuple):
        return [w for item in value for w in (said, word(item))]
    return [said, word(value)]


def command_line(call: Call, *extra: Param) -> str:
    """`call` as the command that does it, then `extra` options the command alone takes
    (`--format markdown`): `judgepool --db FILE judge --depth 10 --run bm25`."""
    if call.verb == "open":  # the database itself: the option every command takes
        return " ".join(option("db", call.args[0] if call.args else None))
    words = ["judgepool"] + (["--db", word(call.db)] if call.db is not None else [])
    words += COMMANDS.get(call.verb, call.verb.replace("_", " ")).split()
    named = ARG_FLAGS.get(call.verb, ())
    for i, arg in enumerate(call.args):
        if i < len(named):
            words += [named[i], word(arg)]
        else:
            words += [word(a) for a in (arg if isinstance(arg, list | tuple) else [arg])]
    params = dict(call.params)
    for name, value in call.params:
        if name == "measures" and isinstance(value, list | tuple):
            words += _measure_flags([str(v) for v in value], params.get("k", 10))
        else:
            words += option(name, value, call.verb)
    for part in extra:
        words += option(part.name, part.value, call.verb)
    return " ".join(words)


def cli_words(part: Part) -> str:
    """A remedy's part as a user of the command line types it (`errors.library_words`' twin)."""
    if isinstance(part, Call):
        return command_line(part)
    return " ".join(option(part.name, part.value))


def _measure_flags(measures: Sequence[str], k: object) -> list[str]:
    """The options that choose these measures: `--rel` / `--key-rel` for the default four (at
    the call's k), else `--measure` each."""
    from judgepool.metrics.measures import default_measures, parse_measures

    ms = parse_measures(tuple(measures))
    if isinstance(k, int) and [m.kind for m in ms] == ["nDCG", "R", "nR", "Judged"]:
        key_rel, rel = ms[1].rel or 3, ms[2].rel or 2
        if ms == default_measures(k, rel, key_rel):
            return ([] if rel == 2 else ["--rel", str(rel)]) + (
                [] if key_rel == 3 else ["--key-rel", str(key_rel)]
            )
    return option("measures", tuple(measures))
