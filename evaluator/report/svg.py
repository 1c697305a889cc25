"""Inline SVG plots generated in Python: line charts with confidence bands, grouped bars.

No JavaScript and no external resources; every text is passed through `html.escape`.
Values may be None (missing): lines break there, bars are left out.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f", "#bcbd22")

W, H = 560, 300
ML, MR, MT, MB = 60, 16, 30, 58   # margins: left, right, top, bottom (ticks: <= 6 characters)


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


@dataclass(frozen=True)
class LineSeries:
    label: str
    xs: list[float]
    ys: list[float | None]
    lows: list[float | None] | None = None
    highs: list[float | None] | None = None


def _open(kind: str, title: str) -> list[str]:
    return [
        (f'<svg class="plot" data-plot="{esc(kind)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{esc(title)}">'),
        f"<title>{esc(title)}</title>",
        f'<text x="{W / 2:.0f}" y="18" text-anchor="middle" class="ptitle">{esc(title)}</text>',
    ]


def nice_top(top: float) -> float:
    """The smallest 1/1.5/2/2.5/3/4/5 x 10^e at or above `top` (five grid steps read well,
    and a maximum just above a round number, 1.05, gets 1.5, not 2)."""
    if top <= 0 or math.isnan(top):
        return 1.0
    exp = math.floor(math.log10(top))
    for m in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 10.0):
        if m * 10**exp >= top - 1e-12:
            return m * 10**exp
    return 10.0 ** (exp + 1)


def fraction_top(values: list[float]) -> float:
    """The axis top of fractions and rates: `nice_top` of the largest value with a margin,
    never above 1 when no value is."""
    top = max(values, default=0.0)
    nice = nice_top(top * 1.05 if top > 0 else 1.0)
    return min(nice, 1.0) if top <= 1.0 else nice


def tick_text(v: float) -> str:
    """A tick label of at most about 6 characters: 12k, 1.5M, 0.25, 0.001 (no e-notation,
    which ran into the axis title)."""
    a = abs(v)
    if a < 1e-12:
        return "0"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.3g}{unit}"
    if a >= 0.001:
        return f"{v:.3g}"
    return f"{v:.1e}"


def _y_axis(y0: float, y1: float, label: str) -> list[str]:
    out = []
    for i in range(6):
        v = y0 + (y1 - y0) * i / 5
        y = MT + (H - MT - MB) * (1 - i / 5)
        out.append(f'<line x1="{ML}" y1="{y:.1f}" x2="{W - MR}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<text x="{ML - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
                   f"{tick_text(v)}</text>")
    out.append(f'<text x="14" y="{(MT + H - MB) / 2:.0f}" text-anchor="middle" class="axis" '
               f'transform="rotate(-90 14 {(MT + H - MB) / 2:.0f})">{esc(label)}</text>')
    return out


def _legend(labels: list[str]) -> list[str]:
    """One row of entries; those that would run past the plot's right edge are counted in a
    closing "+N more" (their lines keep their colours and `<title>` tooltips)."""
    out = []
    x = ML
    for i, label in enumerate(labels):
        text = label if len(label) <= 28 else label[:27] + "…"
        if i and x + 14 + 7 * len(text) > W - MR:
            more = f"+{len(labels) - i} more"
            out.append(f'<text x="{x}" y="{H - 7}" class="legend">{more}</text>')
            break
        out.append(f'<rect x="{x}" y="{H - 16}" width="10" height="10" fill="{color(i)}"/>')
        out.append(f'<text x="{x + 14}" y="{H - 7}" class="legend">{esc(text)}</text>')
        x += 24 + 7 * len(text)
    return out


def line_chart(
    title: str,
    series: list[LineSeries],
    *,
    x_label: str = "k",
    y_label: str = "",
    y_range: tuple[float, float] = (0.0, 1.0),
    kind: str = "line",
    hline: float | None = None,
) -> str:
    """Lines (one per series) with optional shaded [low, high] bands; `hline`: a dashed
    reference line at that y (0 for differences)."""
    xs_all = [x for s in series for x in s.xs]
    x0, x1 = (min(xs_all), max(xs_all)) if xs_all else (0.0, 1.0)
    if x1 == x0:
        x0, x1 = x0 - 0.5, x1 + 0.5
    y0, y1 = y_range
    pw, ph = W - ML - MR, H - MT - MB

    def px(x: float) -> float:
        return ML + pw * (x - x0) / (x1 - x0)

    def py(y: float) -> float:
        y = min(max(y, y0), y1)
        return MT + ph * (1 - (y - y0) / (y1 - y0))

    out = _open(kind, title) + _y_axis(y0, y1, y_label)
    if hline is not None and y0 <= hline <= y1:
        out.append(f'<line class="hline" x1="{ML}" y1="{py(hline):.1f}" x2="{W - MR}" '
                   f'y2="{py(hline):.1f}" stroke="#555" stroke-dasharray="4 3"/>')
    ticks = sorted(set(xs_all))
    step = max(1, len(ticks) // 12)
    for x in ticks[::step]:
        out.append(f'<text x="{px(x):.1f}" y="{H - MB + 16}" text-anchor="middle" class="tick">'
                   f"{x:g}</text>")
    out.append(f'<text x="{ML + pw / 2:.0f}" y="{H - MB + 32}" text-anchor="middle" '
               f'class="axis">{esc(x_label)}</text>')
    for i, s in enumerate(series):
        if s.lows is not None and s.highs is not None:
            pts = [(x, lo, hi) for x, lo, hi in zip(s.xs, s.lows, s.highs, strict=True)
                   if lo is not None and hi is not None]
            if len(pts) >= 2:
                upper = " ".join(f"{px(x):.1f},{py(hi):.1f}" for x, _, hi in pts)
                lower = " ".join(f"{px(x):.1f},{py(lo):.1f}" for x, lo, _ in reversed(pts))
                out.append(f'<polygon class="band" points="{upper} {lower}" fill="{color(i)}" '
                           f'fill-opacity="0.18" stroke="none"/>')
            for x, lo, hi in pts if len(pts) == 1 else []:
                out.append(f'<line x1="{px(x):.1f}" y1="{py(lo):.1f}" x2="{px(x):.1f}" '
                           f'y2="{py(hi):.1f}" stroke="{color(i)}" stroke-width="6" '
                           f'stroke-opacity="0.3"/>')
        segment: list[str] = []
        segments: list[list[str]] = []
        for x, y in zip(s.xs, s.ys, strict=True):
            if y is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            segment.append(f"{px(x):.1f},{py(y):.1f}")
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{color(i)}">'
                       f"<title>{esc(s.label)}: {esc(x_label)}={x:g} → {y:.4f}</title></circle>")
        if segment:
            segments.append(segment)
        for seg in segments:
            if len(seg) > 1:
                out.append(f'<polyline class="series" points="{" ".join(seg)}" fill="none" '
                           f'stroke="{color(i)}" stroke-width="2"/>')
    out += _legend([s.label for s in series])
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(
    title: str,
    categories: list[str],
    series: list[tuple[str, list[float | None]]],
    *,
    y_label: str = "",
    y_max: float | None = None,
    kind: str = "bars",
    value_format: str = "{:.3f}",
    fraction: bool = False,
) -> str:
    """Grouped bars: one group per category, one bar per series. `fraction`: the values are
    rates or fractions (the axis stops at 1 when they do)."""
    vals = [v for _, vs in series for v in vs if v is not None]
    if y_max is not None:
        top = y_max
    elif fraction:
        top = fraction_top(vals)
    else:
        top = nice_top(max(vals) * 1.05 if vals else 1.0)
    pw, ph = W - ML - MR, H - MT - MB
    out = _open(kind, title) + _y_axis(0.0, top, y_label)
    n_cat = max(1, len(categories))
    group_w = pw / n_cat
    bar_w = group_w * 0.8 / max(1, len(series))
    for c, cat in enumerate(categories):
        gx = ML + c * group_w + group_w * 0.1
        for i, (label, vs) in enumerate(series):
            v = vs[c] if c < len(vs) else None
            if v is None:
                continue
            h = ph * min(v, top) / top if top > 0 else 0.0
            x = gx + i * bar_w
            out.append(f'<rect class="bar" x="{x:.1f}" y="{MT + ph - h:.1f}" '
                       f'width="{max(bar_w - 1, 1):.1f}" height="{h:.1f}" fill="{color(i)}">'
                       f"<title>{esc(label)} / {esc(cat)}: {esc(value_format.format(v))}</title>"
                       "</rect>")
        short = cat if len(cat) <= 18 else cat[:17] + "…"
        out.append(f'<text x="{gx + group_w * 0.4:.1f}" y="{H - MB + 16}" text-anchor="middle" '
                   f'class="tick">{esc(short)}</text>')
    out += _legend([label for label, _ in series])
    out.append("</svg>")
    return "\n".join(out)
