"""The timeline as a picture: plain SVG, no library, so it draws in JupyterLab, in the
browser edition and on a page that shows a saved notebook.

    main       ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░    a lane per agent, its run behind
               [req 1][todo][req 2][search][req 3][delegate_task ......]
    main.sub1                               ░░░░░░░░░░░░░
                                            [req 1][search]
    tokens     ▁ ▂ ▂ ▃ ▃ ▄ ▅ ▆                              per request: in, out on top

Bars that overlap in a lane (calls that ran at once, a wait inside a call) sit one under
the other. Marks above a lane are notes: a reminder, the stop gate, a pause.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

WIDTH, LEFT, RIGHT = 760, 120, 14
ROW, BAR, NOTE_STRIP, LANE_GAP = 18, 14, 14, 8
TOKENS_HEIGHT = 56
COLOURS = {"request": "#4e79a7", "call": "#59a14f", "failed": "#e15759", "wait": "#f28e2b",
           "compaction": "#b07aa1", "run": "#e9eef5", "note": "#9c755f",
           "input": "#a0cbe8", "output": "#4e79a7"}
CHAR = 5.6  # about the width of a character at font-size 10: a label that fits is shown


def draw(timeline: Any) -> str:
    """The SVG of a `Timeline` (timeline.py)."""
    place = Placer(timeline)
    parts: list[str] = []
    y = 26
    for lane in timeline.lanes:
        y = draw_lane(parts, timeline, place, lane, y)
    y = draw_tokens(parts, timeline, place, y + 6)
    y = draw_axis(parts, timeline, place, y)
    y = draw_legend(parts, y + 4)
    head = timeline.headline()
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="harness-timeline" '
            f'width="{WIDTH}" height="{y}" viewBox="0 0 {WIDTH} {y}" '
            f'font-family="sans-serif" font-size="10">'
            f'<rect width="{WIDTH}" height="{y}" fill="white"/>'
            f'<text x="4" y="14" font-size="11" font-weight="bold">{escape(head)}</text>'
            + "".join(parts) + "</svg>")


class Placer:
    """Where a bar goes across: by the clock, or by steps (each start or end one step)."""

    def __init__(self, timeline: Any) -> None:
        self.timeline = timeline
        self.plot = WIDTH - LEFT - RIGHT
        self.t0 = min((b.start for b in timeline.bars), default=0.0)
        self.unit = self.plot / max(timeline.steps, 1)

    def span(self, bar: Any) -> tuple[float, float]:
        """The bar's left edge and width, in pixels."""
        if self.timeline.axis == "time":
            scale = self.plot / max(self.timeline.seconds, 1e-9)
            left = LEFT + (bar.start - self.t0) * scale
            return left, max((bar.end - bar.start) * scale, 2.0)
        first, last = self.timeline.place(bar)
        return LEFT + first * self.unit, max((last - first + 1) * self.unit - 1, 1.5)


def draw_lane(parts: list[str], timeline: Any, place: Placer, lane: str, y: float) -> float:
    """One agent's lane from ``y``: its run behind, its bars in rows, notes above."""
    bars = [b for b in timeline.bars if b.agent_id == lane]
    rows = 1 + max((b.row for b in bars if b.kind not in ("run", "note")), default=0)
    height = NOTE_STRIP + rows * ROW + 2
    depth = bars[0].depth

    def title(bar: Any) -> str:
        return f"<title>{escape(tip(bar, timeline.axis == 'time'))}</title>"

    parts.append(f'<text x="{4 + 10 * depth}" y="{y + NOTE_STRIP + 11:.1f}" '
                 f'font-weight="bold">{escape(lane)}</text>')
    for bar in (b for b in bars if b.kind == "run"):
        left, width = place.span(bar)
        parts.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height}" '
                     f'fill="{COLOURS["run"]}" rx="3">{title(bar)}</rect>')
    for bar in (b for b in bars if b.kind not in ("run", "note")):
        left, width = place.span(bar)
        top = y + NOTE_STRIP + bar.row * ROW
        colour = COLOURS["failed" if not bar.ok and bar.kind == "call" else bar.kind]
        parts.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{BAR}" '
                     f'fill="{colour}" rx="2">{title(bar)}</rect>')
        label = fit(bar, width)
        if label:
            parts.append(f'<text x="{left + 2:.1f}" y="{top + 10.5:.1f}" fill="white">'
                         f'{escape(label)}</text>')
    for bar in (b for b in bars if b.kind == "note"):
        left, width = place.span(bar)
        x = left + width / 2
        parts.append(f'<path d="M{x:.1f} {y + 2:.1f} l4 5 l-4 5 l-4 -5 z" '
                     f'fill="{COLOURS["note"]}">{title(bar)}</path>'
                     f'<text x="{x + 5:.1f}" y="{y + 10:.1f}" font-size="9" '
                     f'fill="{COLOURS["note"]}">{escape(bar.label.split(":")[0])}</text>')
    return y + height + LANE_GAP


def draw_tokens(parts: list[str], timeline: Any, place: Placer, y: float) -> float:
    """Each request's tokens under where it ran: input below, output on top of it."""
    asked = [b for b in timeline.bars if b.kind == "request" and b.input_tokens is not None]
    if not asked:
        return y
    most = max((b.input_tokens or 0) + (b.output_tokens or 0) for b in asked) or 1
    scale = TOKENS_HEIGHT / most
    base = y + TOKENS_HEIGHT
    mark = "~" if any(b.estimated for b in asked) else ""
    parts.append(f'<text x="4" y="{y + 10:.1f}" font-weight="bold">tokens</text>'
                 f'<text x="4" y="{y + 22:.1f}" font-size="9">per request</text>'
                 f'<text x="4" y="{y + 34:.1f}" font-size="9">most {mark}{most:,}</text>'
                 f'<line x1="{LEFT}" y1="{base:.1f}" x2="{WIDTH - RIGHT}" y2="{base:.1f}" '
                 f'stroke="#999"/>')
    for bar in asked:
        left, span = place.span(bar)
        width = min(span, 10.0)
        left += (span - width) / 2
        tall_in = (bar.input_tokens or 0) * scale
        tall_out = (bar.output_tokens or 0) * scale
        parts.append(f'<g><title>{escape(bar.agent_id + ", " + bar.label + ": " + bar.tokens)}'
                     f'</title><rect x="{left:.1f}" y="{base - tall_in:.1f}" width="{width:.1f}" '
                     f'height="{tall_in:.1f}" fill="{COLOURS["input"]}"/>'
                     f'<rect x="{left:.1f}" y="{base - tall_in - tall_out:.1f}" '
                     f'width="{width:.1f}" height="{tall_out:.1f}" '
                     f'fill="{COLOURS["output"]}"/></g>')
    return base + 4


def draw_axis(parts: list[str], timeline: Any, place: Placer, y: float) -> float:
    """Seconds along the bottom on the clock; in steps, only which way the run went."""
    if timeline.axis != "time":
        parts.append(f'<text x="{LEFT}" y="{y + 10:.1f}" fill="#666">steps (the order of '
                     f'the run\'s events) →</text>')
        return y + 14
    tick = nice_tick(timeline.seconds)
    n = 0
    while n * tick <= timeline.seconds + 1e-9:
        x = LEFT + n * tick * place.plot / max(timeline.seconds, 1e-9)
        parts.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + 4:.1f}" '
                     f'stroke="#666"/><text x="{x:.1f}" y="{y + 14:.1f}" fill="#666" '
                     f'text-anchor="middle">{n * tick:g} s</text>')
        n += 1
    return y + 18


def draw_legend(parts: list[str], y: float) -> float:
    x = LEFT
    for name, colour in (("request", "request"), ("tool call", "call"), ("failed call", "failed"),
                         ("wait for a person", "wait"), ("compaction", "compaction"),
                         ("an agent's run", "run"), ("note", "note")):
        parts.append(f'<rect x="{x}" y="{y:.1f}" width="10" height="10" fill="{COLOURS[colour]}"/>'
                     f'<text x="{x + 13}" y="{y + 9:.1f}">{name}</text>')
        x += 18 + int(len(name) * CHAR)
    return y + 16


def nice_tick(seconds: float) -> float:
    """1, 2 or 5 times a power of ten: about six ticks across."""
    raw = max(seconds, 1e-3) / 6
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


def fit(bar: Any, width: float) -> str:
    """The longest label that fits in ``width`` pixels: "req 3" or "3"; a tool's name,
    cut short if it must be (or nothing)."""
    if bar.kind == "request":
        tried = [bar.label.replace("request ", "req "), bar.label.split()[-1]]
    else:
        tried = [bar.label, *(bar.label[:n] + "…" for n in range(len(bar.label) - 1, 2, -1))]
    return next((label for label in tried if len(label) * CHAR + 4 <= width), "")


def tip(bar: Any, timed: bool) -> str:
    """What a bar says when the pointer rests on it (in steps, no time: the picture of
    the same run stays the same)."""
    extra = [x for x in (bar.detail, bar.tokens) if x]
    if timed:
        extra.append(f"{bar.end - bar.start:.3f} s")
    return f"{bar.agent_id}: {bar.label}" + (f" ({', '.join(extra)})" if extra else "")
