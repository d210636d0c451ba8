"""The charts of the HTML report as inline SVG: the runs' means with intervals, and the sorted
per-query differences of a candidate. Plain SVG with `<title>` tooltips: no script, no font or
file to fetch, the same bytes for the same figures (coordinates rounded to 0.1 px)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#bab0ac")
BETTER, WORSE, INK, GRID = "#2e7d32", "#c62828", "#222222", "#dddddd"


def _f(x: float) -> str:
    """A coordinate, to 0.1 px, without a trailing .0."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _text(x: float, y: float, body: str, anchor: str = "middle", size: int = 11) -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{INK}">{escape(body)}</text>'
    )


def _svg(width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
    )


def _ticks(low: float, high: float) -> list[float]:
    """Five ticks from low to high."""
    return [low + (high - low) * i / 4 for i in range(5)]


def runs_chart(
    measures: Sequence[str],
    runs: Sequence[str],
    points: dict[tuple[str, str], tuple[float | None, tuple[float, float] | None]],
    width: int = 760,
    height: int = 300,
) -> str:
    """Each run's mean (dot) and 95% interval (bar) on each measure, grouped by measure."""
    left, right, top, bottom = 48, 12, 28, 44
    values = [
        v
        for mean, ci in points.values()
        for v in ([mean] if mean is not None else []) + (list(ci) if ci else [])
    ]
    high = max([1.0, *values])
    low = min([0.0, *values])
    plot_w, plot_h = width - left - right, height - top - bottom

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - low) / (high - low or 1))

    out = [_svg(width, height, "means of the runs")]
    for tick in _ticks(low, high):
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{_f(y(tick))}" '
            f'y2="{_f(y(tick))}" stroke="{GRID}"/>'
        )
        out.append(_text(left - 6, y(tick) + 4, f"{tick:.2f}", "end", 10))
    slot = plot_w / max(1, len(measures))
    for i, measure in enumerate(measures):
        x0 = left + slot * i
        out.append(_text(x0 + slot / 2, height - bottom + 18, measure))
        step = slot / (len(runs) + 1)
        for j, run in enumerate(runs):
            mean, ci = points[(measure, run)]
            x = x0 + step * (j + 1)
            colour = PALETTE[j % len(PALETTE)]
            tip = (
                f"{run} {measure}: "
                + ("no value" if mean is None else f"{mean:.3f}")
                + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
            )
            out.append(f"<g><title>{escape(tip)}</title>")
            if ci is not None:
                out.append(
                    f'<line x1="{_f(x)}" x2="{_f(x)}" y1="{_f(y(ci[0]))}" '
                    f'y2="{_f(y(ci[1]))}" stroke="{colour}" stroke-width="2"/>'
                )
            if mean is not None:
                out.append(f'<circle cx="{_f(x)}" cy="{_f(y(mean))}" r="4" fill="{colour}"/>')
            out.append("</g>")
    for j, run in enumerate(runs):  # the legend, along the top
        x = left + 130 * j
        out.append(f'<circle cx="{_f(x + 5)}" cy="12" r="4" fill="{PALETTE[j % len(PALETTE)]}"/>')
        out.append(_text(x + 14, 16, run, "start"))
    out.append("</svg>")
    return "\n".join(out)


def delta_chart(
    title: str,
    diffs: Sequence[tuple[str, float]],
    width: int = 760,
    height: int = 200,
) -> str:
    """One bar per query, candidate - baseline, in the order given (data.query_differences: the
    largest gain first, as on the dashboard)."""
    left, right, top, bottom = 48, 12, 24, 24
    ordered = list(diffs)
    reach = max([abs(d) for _, d in ordered] + [1e-9])
    plot_w, plot_h = width - left - right, height - top - bottom

    def y(v: float) -> float:
        return top + plot_h * (1 - (v + reach) / (2 * reach))

    out = [_svg(width, height, title), _text(left, 14, title, "start", 12)]
    for tick in (-reach, 0.0, reach):
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{_f(y(tick))}" '
            f'y2="{_f(y(tick))}" stroke="{GRID if tick else INK}"/>'
        )
        out.append(_text(left - 6, y(tick) + 4, f"{tick:+.2f}", "end", 10))
    bar = plot_w / max(1, len(ordered))
    for i, (qid, d) in enumerate(ordered):
        if d == 0:
            continue
        top_y, bottom_y = sorted((y(d), y(0.0)))
        colour = BETTER if d > 0 else WORSE
        out.append(
            f'<rect x="{_f(left + bar * i)}" y="{_f(top_y)}" '
            f'width="{_f(max(bar - 1, 1))}" '
            f'height="{_f(bottom_y - top_y)}" fill="{colour}">'
            f"<title>{escape(f'query {qid}: {d:+.3f}')}</title></rect>"
        )
    gained, lost = sum(d > 0 for _, d in ordered), sum(d < 0 for _, d in ordered)
    said = f"{len(ordered)} queries: {gained} gained, {lost} lost, {len(ordered) - gained - lost}"
    out.append(_text(width - right, height - 6, f"{said} unchanged", "end", 10))
    out.append("</svg>")
    return "\n".join(out)
