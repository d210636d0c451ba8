"""`judgepool prompt render | list | show`: the exact prompt a judge sends for a pair, and the
templates there are. The work is the services of judgepool/api/prompt.py (which
`jp.Database.render_prompt` and `jp.templates` call too); this module prints what they return."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from judgepool.api.options import JUDGE_DEFAULTS
from judgepool.api.store import Store
from judgepool.defaults import Level
from judgepool.ui.format import echo_json, echo_table, note
from judgepool.ui.options import level_option, runs_option

if TYPE_CHECKING:
    from judgepool.api.options import Effort
    from judgepool.api.prompt import RenderedPrompt


@click.group("prompt")
def prompt() -> None:
    """The prompt templates, and the exact prompt a judge sends for one pair."""


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


def print_rendered(found: RenderedPrompt) -> None:
    """The pair, the template, the model and key, then each message as sent."""
    r, t = found.request, found.template
    click.echo(
        f"prompt of ({found.qid}, {found.doc_id}) at the {found.level} level, template "
        f"{t['name']} (version {t['version']}, {t['hash']})"
    )
    spans = ", ".join(f"{s.doc_id} [{s.start}:{s.end}]" for s in r.shown)
    cut = "; passage truncated to --passage-tokens" if r.truncated else ""
    cut += "; query truncated to --query-tokens" if r.query_truncated else ""
    click.echo(f"shown: {spans}{cut}")
    messages = found.messages
    if found.model is None:
        click.echo("cache key: none without --model (the key covers the model and its parameters)")
    else:
        click.echo(
            f"model: {found.model}, labeller {found.labeller}; parameters "
            f"{_compact(found.parameters)}"
        )
        click.echo(f"cache key: {found.cache_key}")
        body = dict(found.body or {})
        sent = body.pop("messages", messages)
        where = "litellm converts it for the provider" if found.body_converted else "as POSTed"
        click.echo(f"request: {_compact(body)} ({where})")
        if sent != messages and not found.body_converted:
            roles = " + ".join(m["role"] for m in sent)
            note(
                f"note: litellm sends {found.model} these messages as {roles} (its own "
                "transformation for this model); they are shown as sent"
            )
            messages = sent
    for message in messages:
        click.echo(f"--- {message['role']} ---")
        click.echo(message["content"])


@prompt.command("render")
@click.option("--qid", required=True, metavar="QID", help="The query.")
@click.option(
    "--doc",
    "doc_id",
    required=True,
    metavar="DOC_ID",
    help="The doc (a chunk id, or a document id with --level doc).",
)
@click.option(
    "--template",
    default=None,
    metavar="NAME|FILE",
    help="Prompt template: a packaged name, or a file (any value with a / or a suffix) "
    "[relevance-v1].",
)
@level_option
@runs_option
@click.option(
    "--model",
    default=None,
    metavar="MODEL",
    help="The litellm model: adds its cache key and the request body it is sent.",
)
@click.option("--temperature", type=float, default=None, help="As `judge --temperature`.")
@click.option(
    "--max-tokens", type=click.IntRange(min=1), default=None, help="As `judge --max-tokens`."
)
@click.option(
    "--reasoning-effort",
    type=click.Choice(["low", "medium", "high"]),
    default=None,
    help="As `judge --reasoning-effort`.",
)
@click.option(
    "--passage-tokens",
    type=click.IntRange(min=16),
    default=JUDGE_DEFAULTS.passage_tokens,
    show_default=True,
    help="As `judge --passage-tokens`.",
)
@click.option(
    "--query-tokens",
    type=click.IntRange(min=16),
    default=JUDGE_DEFAULTS.query_tokens,
    show_default=True,
    help="As `judge --query-tokens`.",
)
@click.option(
    "--max-chunks",
    type=click.IntRange(min=1),
    default=JUDGE_DEFAULTS.max_chunks,
    show_default=True,
    help="As `judge --max-chunks`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead.")
@click.pass_obj
def render(
    store: Store,
    qid: str,
    doc_id: str,
    template: str | None,
    level: Level,
    runs: tuple[str, ...],
    model: str | None,
    temperature: float | None,
    max_tokens: int | None,
    reasoning_effort: Effort | None,
    passage_tokens: int,
    query_tokens: int,
    max_chunks: int,
    as_json: bool,
) -> None:
    """Print the exact messages a judge sends for one pair, and (with --model) its cache key.

    \b
    Examples:
      judgepool prompt render --qid 1037798 --doc 7067032
      judgepool prompt render --qid q1 --doc P3 --level doc --model openai/gpt-4o-mini
    The same options as `judgepool judge` give the same request: the texts normalised, cut to
    the token budgets and fenced, at the doc level the chunks the runs retrieved. No call is
    made and no key is needed.
    """
    from judgepool.api.options import JudgeOptions
    from judgepool.api.prompt import render as render_prompt

    options = JudgeOptions(
        model=model,
        level=level,
        template=template,
        runs=runs,
        passage_tokens=passage_tokens,
        max_chunks=max_chunks,
        query_tokens=query_tokens,
        temperature=temperature,
        max_tokens=max_tokens,
        reasoning_effort=reasoning_effort,
    )
    found = render_prompt(store, qid, doc_id, options)
    if as_json:
        echo_json(found.as_dict())
    else:
        print_rendered(found)


@prompt.command("list")
def list_templates() -> None:
    """The packaged templates: name, version, hash and file."""
    from judgepool.api.prompt import templates

    echo_table(
        ("name", "version", "hash", "file"),
        [(t.name, t.version, t.hash, t.source) for t in templates()],
    )


@prompt.command("show")
@click.argument("name", default="relevance-v1", metavar="NAME|FILE")
def show(name: str) -> None:
    """Print a template's file as it is hashed (a copy, given a new `# version:`, is yours).

    \b
    Example:
      judgepool prompt show relevance-v1 > my-prompt.txt
    """
    from judgepool.api.prompt import show as template_text

    found, text = template_text(name)
    note(f"{found.name}: version {found.version}, {found.hash}, {found.source}")
    click.echo(text, nl=not text.endswith("\n"))
