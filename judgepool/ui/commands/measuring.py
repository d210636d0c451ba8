"""The measure options `eval`, `compare` and `report` share, handed to a command as one value.

`@measure_options(formats)` adds --k, --rel, --key-rel, --measure, --resamples, --seed and
--average (and --format, one of `formats`) to a command, and passes them to it as one
`Measuring` (the parameter `measuring`), which builds the command's spec: the options are
declared once and turned into a spec once, whatever the command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import click

from judgepool.defaults import AVERAGE, AVERAGES, KEY_REL, REL, RESAMPLES, SEED, Average, K

F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S")


@dataclass(frozen=True)
class Measuring:
    """The measure options as the command line gave them."""

    k: int
    rel: int
    key_rel: int
    measures: tuple[str, ...]
    resamples: int
    seed: int
    average: Average

    def spec(self, kind: Callable[..., S], **rest: Any) -> S:
        """A spec of `kind` (metrics.spec's EvalSpec, CompareSpec) with these options and
        `rest` (level, labeller, gate ...)."""
        return kind(**{name: getattr(self, name) for name in _FIELDS}, **rest)


_FIELDS = tuple(field.name for field in fields(Measuring))  # the options, as the spec names them


def measure_options(formats: tuple[str, ...] | None) -> Callable[[F], F]:
    """The shared measure options (and --format, one of `formats`; none when None), passed to
    the command as `measuring`."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def collected(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in _FIELDS}
            return func(*args, measuring=Measuring(**given), **kwargs)

        return _with_measure_options(collected, formats)  # type: ignore[return-value]

    return decorate


def _with_measure_options(func: F, formats: tuple[str, ...] | None) -> F:
    for option in reversed(
        (
            click.option(
                "--k",
                "k",
                type=click.IntRange(min=1),
                default=K,
                show_default=True,
                help="Cutoff: the measures look at each run's top K.",
            ),
            click.option(
                "--rel",
                type=click.IntRange(min=1),
                default=REL,
                show_default=True,
                help="Lowest grade counted relevant by nR@K.",
            ),
            click.option(
                "--key-rel",
                type=click.IntRange(min=1),
                default=KEY_REL,
                show_default=True,
                help="Lowest grade of a key doc, for R(rel=KEY_REL)@K.",
            ),
            click.option(
                "--measure",
                "measures",
                multiple=True,
                metavar="MEASURE",
                help="An ir-measures measure (nDCG@10, RR@10, AP@100, P(rel=2)@5 ...),"
                " repeatable [default: nDCG@K, R(rel=KEY_REL)@K, nR@K, Judged@K].",
            ),
            click.option(
                "--resamples",
                type=click.IntRange(min=1),
                default=RESAMPLES,
                show_default=True,
                help="Bootstrap and permutation resamples.",
            ),
            click.option(
                "--seed",
                type=int,
                default=SEED,
                show_default=True,
                help="Seed of the resampling (a fixed one, so runs repeat).",
            ),
            *(
                [
                    click.option(
                        "--format",
                        "fmt",
                        type=click.Choice(formats),
                        default="table",
                        show_default=True,
                    )
                ]
                if formats
                else []
            ),
            click.option(
                "--average",
                type=click.Choice(AVERAGES),
                default=AVERAGE,
                show_default=True,
                help="defined: each mean over the queries with a doc at the measure's "
                "threshold; trec_eval: over every query, those counting 0, exactly as "
                "trec_eval -c (to reproduce published tables).",
            ),
        )
    ):
        func = option(func)
    return func
