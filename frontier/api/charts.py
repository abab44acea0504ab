"""Small server-rendered SVG charts for the dashboard: no JavaScript, no third-party code.

Hand-written because the charts are three simple shapes (a stacked bar, stacked columns and
horizontal bars) and a charting library would mean shipping JavaScript to the browser. The
functions are pure: data in, SVG markup out (every text is escaped).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from markupsafe import Markup

# One colour per series, readable on white and for common colour-vision deficiencies.
COLOURS = {
    "pending": "#4c78a8",
    "fetching": "#f58518",
    "fetched": "#54a24b",
    "failed": "#e45756",
    "dead": "#9d9d9d",
    "pages_ok": "#54a24b",
    "pages_error": "#e45756",
    "pages_other": "#bab0ac",
    "polls": "#4c78a8",
}


def _colour(name: str) -> str:
    return COLOURS.get(name, "#72b7b2")


def stacked_bar(parts: Sequence[tuple[str, int]], *, width: int = 600, height: int = 28) -> Markup:
    """One horizontal bar split by share (e.g. the frontier by status)."""
    total = sum(n for _, n in parts)
    shapes = []
    x = 0.0
    for name, n in parts:
        if total == 0 or n == 0:
            continue
        w = width * n / total
        shapes.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" fill="{_colour(name)}">'
            f"<title>{escape(name)}: {n:,}</title></rect>"
        )
        x += w
    if not shapes:
        shapes.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#eee"/>')
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" height="{height}" '
        f'preserveAspectRatio="none" role="img" aria-label="share by status">'
        + "".join(shapes)
        + "</svg>"
    )


def stacked_columns(
    buckets: Sequence[dict[str, int]],
    series: Sequence[str],
    labels: Sequence[str],
    *,
    width: int = 1400,
    height: int = 170,
) -> Markup:
    """One column per bucket (e.g. per minute), stacked by series, with a y-axis maximum
    and the first, middle and last bucket labels along the bottom."""
    top, bottom, left = 16, 22, 44
    plot_h = height - top - bottom
    plot_w = width - left - 4
    peak = max([sum(b.get(s, 0) for s in series) for b in buckets] + [0])
    scale = plot_h / peak if peak else 0.0
    step = plot_w / max(len(buckets), 1)
    shapes = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 4}" y2="{top + plot_h}" '
        'stroke="#ccc"/>',
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" class="axis">{peak:,}</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end" class="axis">0</text>',
    ]
    for i, bucket in enumerate(buckets):
        y = float(top + plot_h)
        for name in series:
            n = bucket.get(name, 0)
            if not n:
                continue
            h = n * scale
            y -= h
            shapes.append(
                f'<rect x="{left + i * step + 0.5:.2f}" y="{y:.2f}" '
                f'width="{max(step - 1, 0.5):.2f}" height="{h:.2f}" fill="{_colour(name)}">'
                f"<title>{escape(labels[i])} {escape(name)}: {n:,}</title></rect>"
            )
    for i in sorted({0, len(labels) // 2, len(labels) - 1}) if labels else ():
        anchor = "start" if i == 0 else "end" if i == len(labels) - 1 else "middle"
        shapes.append(
            f'<text x="{left + i * step + step / 2:.2f}" y="{height - 6}" '
            f'text-anchor="{anchor}" class="axis">{escape(labels[i])}</text>'
        )
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="throughput per minute">' + "".join(shapes) + "</svg>"
    )


def bar_rows(
    rows: Sequence[tuple[str, int]],
    *,
    colour: str = "#4c78a8",
    href: Callable[[str], str] | None = None,
) -> Markup:
    """Labelled horizontal bars, longest first as given (e.g. top hosts by pending URLs),
    as HTML rows with inline SVG bars so the labels wrap and stay selectable; `href` makes
    each label a link (to the host's page)."""
    peak = max([n for _, n in rows] + [1])
    out = []
    for label, n in rows:
        share = 100 * n / peak
        out.append(
            f'<div class="bar-row"><span class="bar-label" title="{escape(label)}">'
            f'{_linked(label, href)}</span><svg class="bar" viewBox="0 0 100 10" '
            f'preserveAspectRatio="none"><rect width="{share:.2f}" height="10" '
            f'fill="{colour}"/></svg><span class="num">{n:,}</span></div>'
        )
    return Markup("".join(out))


def _linked(label: str, href: Callable[[str], str] | None) -> str:
    if href is None:
        return escape(label)
    return f'<a href="{escape(href(label))}">{escape(label)}</a>'
