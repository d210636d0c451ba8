"""`judgepool labels ...`: derive labels (lift chunk labels to documents)."""

from __future__ import annotations

import click

from judgepool.pooling.store.connection import Store
from judgepool.ui.options import judge_option


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
def lift(store: Store, to_level: str, rule: str, labeller: str | None) -> None:
    """Write doc-level labels from the effective chunk-level labels, with provenance."""
    from judgepool.pooling.lift import describe, lift_labels

    click.echo(describe(lift_labels(store, rule=rule, labeller=labeller)))
