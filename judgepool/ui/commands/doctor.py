"""`judgepool doctor`: what this machine has for judgepool (judgepool/api/doctor.py), printed."""

from __future__ import annotations

import click

from judgepool.api.store import Store
from judgepool.errors import JudgepoolError
from judgepool.reports.command_line import cli_words
from judgepool.ui.format import echo_json
from judgepool.ui.reporting import cli_remedy


@click.command("doctor")
@click.option(
    "--model",
    default=None,
    metavar="MODEL",
    help="Also check this model: its key, its price in litellm's map, whether it reasons.",
)
@click.option(
    "--api-base",
    default=None,
    metavar="URL",
    help="The model's own server (then an unknown price is only a note).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead.")
@click.pass_obj
def doctor(store: Store, model: str | None, api_base: str | None, as_json: bool) -> None:
    """Check keys (names only), litellm and a model's price, the offline model, Chromium, the
    database's schema and the cache folder; say what to fix.

    \b
    Examples:
      judgepool doctor
      judgepool doctor --model openai/gpt-4o-mini
    Exit codes: 0 no problem (notes are fine), 1 a problem was found (each says what to do).
    """
    from judgepool.api.doctor import doctor as diagnose

    found = diagnose(model=model, api_base=api_base, db=store.path)
    if as_json:
        echo_json(found.as_dict(cli_words))
    else:
        width = max(len(c.name) for c in found.checks)
        for check in found.checks:
            message, hint = cli_remedy(check.message), cli_remedy(check.hint)
            line = f"{check.status:<7}  {check.name:<{width}}  {message}"
            click.echo(line + (f" — {hint}" if hint else ""))
    if not found.ok:
        names = ", ".join(c.name for c in found.problems)
        raise JudgepoolError(
            f"{len(found.problems)} problem{'' if len(found.problems) == 1 else 's'} found "
            f"({names})",
            "do what each problem line says, then run `judgepool doctor` again",
        )
