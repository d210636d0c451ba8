"""Printing results: aligned text tables for people, TSV / JSON / JSONL for programs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import click


def fmt_float(value: float | None, digits: int = 3) -> str:
    """A number for a table cell; missing values print as an en dash."""
    return "–" if value is None else f"{value:.{digits}f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Sequence[int] = ()) -> str:
    """A plain aligned table; columns listed in `right` are right-aligned (numbers)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def echo_table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Sequence[int] = ()
) -> None:
    """Print a table to stdout."""
    click.echo(table(headers, rows, right))


def echo_tsv(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Print tab-separated values with a header line."""
    click.echo("\t".join(headers))
    for row in rows:
        click.echo("\t".join("" if c is None else str(c) for c in row))


def echo_json(value: Any) -> None:
    """Print one JSON document."""
    click.echo(json.dumps(value, indent=2, sort_keys=False, default=str))


def echo_jsonl(rows: Iterable[dict[str, Any]]) -> None:
    """Print one JSON object per line."""
    for row in rows:
        click.echo(json.dumps(row, default=str))


def note(message: str) -> None:
    """A remark for the person at the terminal: stderr, so stdout stays machine-readable."""
    click.echo(message, err=True)
