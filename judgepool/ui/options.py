"""Options shared by several commands, defined once so they read the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from judgepool.api.store import Store
from judgepool.defaults import DEPTH, LEVEL, LEVELS, Level

F = TypeVar("F", bound=Callable[..., Any])


def chosen_level(store: Store | None, value: str | None) -> Level:
    """The --level given, else the one `api.inventory.default_level` decides (the level that has
    labels); a level other than chunk is said on stderr, once."""
    if value is not None:
        return value  # type: ignore[return-value]  # click.Choice(LEVELS) checked it
    from judgepool.api.inventory import default_level
    from judgepool.errors import JudgepoolError

    try:
        level = default_level(store) if store is not None else LEVEL
    except JudgepoolError:  # no usable database: the command itself says what is wrong
        return LEVEL
    if level != LEVEL:
        click.echo(
            f"note: only {level}-level labels in this database: working at --level {level} "
            "(give --level chunk for the chunk ids)",
            err=True,
        )
    return level


def _default_level(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    return chosen_level(ctx.find_object(Store), value)


def level_option(func: F) -> F:
    """--level chunk|doc [default: the level that has labels], decided as it is parsed."""
    return _level(func, callback=_default_level)


def later_level_option(func: F) -> F:
    """--level as `level_option`, but None when not given: the command decides it with
    `chosen_level` while it holds the database open for its own reads (`api.store.holding`),
    which spares a command that is mostly start-up a second open of the file."""
    return _level(func, callback=None)


def _level(func: F, callback: Callable[..., Any] | None) -> F:
    return click.option(
        "--level",
        type=click.Choice(LEVELS),
        default=None,
        callback=callback,
        help="chunk: the ids the runs rank; doc: their parent documents (best chunk per doc) "
        "[default: chunk, or doc when only doc-level labels exist].",
    )(func)


def runs_option(func: F) -> F:
    """--run NAME (repeatable)."""
    return click.option(
        "--run",
        "runs",
        multiple=True,
        metavar="NAME",
        help="A run to include (repeat for several) [default: every run].",
    )(func)


def depth_option(func: F) -> F:
    """--depth K."""
    return click.option(
        "--depth",
        type=click.IntRange(min=1),
        default=DEPTH,
        show_default=True,
        help="Pool the top K of each run.",
    )(func)


def judge_option(func: F) -> F:
    """--judge LABELLER: whose judge labels count when several judges labelled the same pairs."""
    return click.option(
        "--judge",
        "labeller",
        default=None,
        metavar="LABELLER",
        help="Count only this judge's labels (human labels always count) [default: any judge].",
    )(func)


def all_queries_option(func: F) -> F:
    """--all-queries: pool queries with no label yet too."""
    return click.option(
        "--all-queries",
        is_flag=True,
        help="Also pool queries that have no label yet (default: the evaluation set only).",
    )(func)
