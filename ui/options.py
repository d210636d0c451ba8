"""Options shared by several commands, defined once so they read the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def level_option(func: F) -> F:
    """--level chunk|doc."""
    return click.option(
        "--level",
        type=click.Choice(["chunk", "doc"]),
        default="chunk",
        show_default=True,
        help="chunk: the ids the runs rank; doc: their parent documents (best chunk per doc).",
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
        default=10,
        show_default=True,
        help="Pool the top K of each run.",
    )(func)


def judge_option(func: F) -> F:
    """--judge LABELLER: whose judge labels count when several judges labelled the same pairs."""
    return click.option(
        "--judge",
        "judge",
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
