"""Checks of a drawn matplotlib figure: texts clipped by the figure, texts overlapping."""

from __future__ import annotations

from typing import Any

from matplotlib.text import Text


def drawn_texts(fig: Any) -> list[Text]:
    """Every text the figure draws: visible, non-empty, tick labels only inside the view."""
    hidden = set()
    for ax in fig.axes:
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(low, high), max(low, high)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                inside = low - 1e-12 * abs(high - low) <= tick.get_loc() <= high + 1e-12 * abs(
                    high - low)
                if not inside or not tick.get_visible():
                    hidden |= {id(tick.label1), id(tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and id(t) not in hidden and t.get_alpha() != 0]


def figure_problems(fig: Any, tolerance: float = 0.5) -> list[str]:
    """Texts outside the figure, and pairs of texts whose boxes overlap (after a draw)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [(t, t.get_window_extent(renderer)) for t in drawn_texts(fig)]
    problems = []
    for text, extent in texts:
        if (extent.x0 < box.x0 - tolerance or extent.y0 < box.y0 - tolerance
                or extent.x1 > box.x1 + tolerance or extent.y1 > box.y1 + tolerance):
            problems.append(f"clipped: {text.get_text()!r} at {extent.bounds}")
    for i, (a, ea) in enumerate(texts):
        for b, eb in texts[i + 1:]:
            width = min(ea.x1, eb.x1) - max(ea.x0, eb.x0)
            height = min(ea.y1, eb.y1) - max(ea.y0, eb.y0)
            if width > tolerance and height > tolerance:
                problems.append(f"overlap: {a.get_text()!r} and {b.get_text()!r}")
    return problems
