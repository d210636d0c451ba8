"""`judgepool labels ...`: derive labels (lift chunk labels to documents)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from judgepool.api.store import Store
from judgepool.ui.options import judge_option

if TYPE_CHECKING:
    from judgepool.api.lift import LiftRule


@click.group("labels")
def labels() -> None:
    """Work with labels: lift chunk labels to their documents."""


@labels.command("lift")
@click.option(
    "--to",
    "to_level",
    type=click.Choice(["doc"]),
    required=True,
    help="The level to lift to (documents: the chunks' parent_id).",
)
@click.option(
    "--rule",
    type=click.Choice(["max"]),
    default="max",
    show_default=True,
    help="max: a document is as relevant as its best labelled chunk.",
)
@judge_option
@click.pass_obj
def lift(store: Store, to_level: Literal["doc"], rule: LiftRule, labeller: str | None) -> None:
    """Write doc-level labels from the effective chunk-level labels, with provenance."""
    from judgepool.api.lift import lift_labels

    done = lift_labels(store, to=to_level, rule=rule, labeller=labeller)
    click.echo(
        f"lifted {done.from_chunks} chunk labels to {done.labels} doc-level labels on "
        f"{done.queries} queries (rule {done.rule}; {done.human} human, {done.judged} judge)"
    )
