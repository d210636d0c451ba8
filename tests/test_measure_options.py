"""The measure options eval, compare and report share reach each command as one value, and the
spec it builds holds every one of them as given."""

from __future__ import annotations

from typing import Any

import click
from click.testing import CliRunner

from judgepool.defaults import AVERAGE, KEY_REL, REL, RESAMPLES, SEED, K
from judgepool.metrics.spec import CompareSpec, EvalSpec
from judgepool.ui.commands.measuring import Measuring, measure_options

GIVEN = [
    *("--k", "5", "--rel", "1", "--key-rel", "3", "--measure", "RR@10", "--measure", "P@5"),
    *("--resamples", "77", "--seed", "9", "--average", "trec_eval", "--format", "json"),
]


def _seen(formats: tuple[str, ...] | None, args: list[str]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    @click.command()
    @click.option("--name", default="x")
    @measure_options(formats)
    def command(**kwargs: Any) -> None:
        seen.update(kwargs)

    result = CliRunner().invoke(command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen


def test_the_options_arrive_as_one_value_beside_the_others() -> None:
    seen = _seen(("table", "json"), ["--name", "y", *GIVEN])
    assert seen == {
        "name": "y",
        "fmt": "json",
        "measuring": Measuring(5, 1, 3, ("RR@10", "P@5"), 77, 9, "trec_eval"),
    }


def test_a_command_without_formats_gets_no_format() -> None:
    seen = _seen(None, [])
    assert "fmt" not in seen
    assert seen["measuring"] == Measuring(K, REL, KEY_REL, (), RESAMPLES, SEED, AVERAGE)


def test_the_spec_holds_every_option_and_the_rest() -> None:
    measuring = _seen(("json",), GIVEN)["measuring"]
    assert measuring.spec(EvalSpec, level="doc", labeller="j") == EvalSpec(
        level="doc",
        labeller="j",
        k=5,
        rel=1,
        key_rel=3,
        measures=("RR@10", "P@5"),
        resamples=77,
        seed=9,
        average="trec_eval",
    )
    spec = measuring.spec(CompareSpec, level="chunk", labeller=None, gate=0.5, force=True)
    assert (spec.k, spec.resamples, spec.seed, spec.average, spec.gate, spec.force) == (
        5,
        77,
        9,
        "trec_eval",
        0.5,
        True,
    )
