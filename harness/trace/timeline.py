"""A run's timeline: where its time and its tokens went, from its events alone.

    agent        what            steps →                  tokens in → out
    main         request 1       ██                       ~977 → ~76
    main         todo_write        ██
    main         delegate_task         ████████           a sub-agent's run lies inside
      main.sub1  request 1              ██                ~302 → ~26
    main         reminder                       ◆         a note: one step
    main         read_file                       ████     calls that ran at once:
    main         read_file                        ████    their bars overlap

Each event of a run says when it happened (``event.at``) and in what order, so a bar runs
from the event that starts it to the one that ends it: a request from ``model_request``
to ``model_reply``, a call from ``tool_call`` (admitted) to ``tool_result``, a sub-agent's
run from its ``run_start`` to its ``run_end``, a compaction, a wait for a person's yes.
The picture (svg.py) puts them on the clock when the run took long enough for the clock
to say something (a live model), else in steps (a scripted model answers at once: the
order is what there is to see). The text says only the order, the overlaps and the
tokens, never a time, so a notebook's saved output stays the same from run to run.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CLOCK_FROM = 1.0  # seconds: a shorter run is drawn in steps (its clock is mostly noise)
TEXT_COLUMNS = 48  # the widest a text bar gets: a longer run's steps are scaled to it
TEXT_ROWS = 60  # a longer run's text shows its first and last rows
NOTES = {"reminder": "reminder", "stop_gate": "stop gate: pushed back",
         "answer_refused": "answer refused: pushed back",
         "answer_pushback": "answer pushed back", "summary_failed": "summary failed",
         "hook_error": "a hook failed"}  # drawn as a mark, and any *_refused, *_pushback


@dataclass
class Bar:
    """One thing the run did, from the event that started it to the one that ended it
    (``first`` and ``last``: their places in the run's events; ``start``, ``end``: their
    times, 0 for a run saved before events had times)."""

    kind: str  # "run", "request", "call", "wait", "compaction" or "note"
    agent_id: str
    depth: int
    label: str
    first: int
    last: int
    start: float = 0.0
    end: float = 0.0
    ok: bool = True
    detail: str = ""  # an outcome, a call's status, what a wait came to
    input_tokens: int | None = None
    output_tokens: int | None = None
    estimated: bool = False
    row: int = 0  # within its agent's lane: bars that overlap sit one under the other

    @property
    def tokens(self) -> str:
        if self.input_tokens is None:
            return ""
        mark = "~" if self.estimated else ""
        return f"{mark}{self.input_tokens:,} → {mark}{self.output_tokens or 0:,}"


class Timeline:
    """The bars of one run, their lanes (one per agent), and the axis they are drawn on.
    In a notebook it shows as a picture (SVG), with its text as the plain fallback."""

    def __init__(self, events: Iterable[Any], axis: str = "auto") -> None:
        if axis not in ("auto", "time", "steps"):
            raise ValueError(f"axis is 'auto', 'time' or 'steps', not {axis!r}")
        self.bars = bars_of(list(events))
        self.lanes = list(dict.fromkeys(b.agent_id for b in self.bars))
        stamped = bool(self.bars) and all(b.start and b.end for b in self.bars)
        if axis == "time" and not stamped:
            raise ValueError("this run's events carry no times (saved before events had "
                             "them): draw it with axis='steps'")
        self.seconds = max(b.end for b in self.bars) - min(b.start for b in self.bars) \
            if stamped else 0.0
        self.axis = axis if axis != "auto" else (
            "time" if stamped and self.seconds >= CLOCK_FROM else "steps")
        marks = {i for b in self.bars if b.kind != "run" for i in (b.first, b.last)}
        for run in (b for b in self.bars if b.kind == "run"):  # a run that did nothing
            if not any(run.first <= i <= run.last for i in marks):
                marks |= {run.first, run.last}
        self.marks = sorted(marks)  # the events where a bar starts or ends: one step each
        pack(self.bars)

    @property
    def steps(self) -> int:
        return len(self.marks)

    def place(self, bar: Bar) -> tuple[int, int]:
        """A bar's first and last step; a run's are those of the first and last thing it did
        (its own start and end would only widen the picture)."""
        first = bisect_left(self.marks, bar.first)
        return first, max(first, bisect_right(self.marks, bar.last) - 1)

    def why(self) -> str:
        """Which axis the picture uses, and why (what the text says too)."""
        if self.axis == "time":
            return "drawn on the clock (this text: in steps)"
        if self.seconds and self.seconds < CLOCK_FROM:
            return "in steps (the run took under a second)"
        return "in steps"

    def headline(self) -> str:
        requests = sum(b.kind == "request" for b in self.bars)
        calls = sum(b.kind == "call" for b in self.bars)
        return (f"Timeline: {counted(requests, 'request')}, {counted(calls, 'tool call')}, "
                f"{counted(len(self.lanes), 'agent')}, {self.why()}")

    def text(self) -> str:
        """Each bar a row, in the order they started: its agent, what it was, where it lies
        among the run's steps, its tokens. No times: the same run reads the same."""
        if not self.bars:
            return "Timeline: no events"
        width = min(self.steps, TEXT_COLUMNS)
        lines = [self.headline()]
        name_width = max(5, *(len(b.agent_id) + 2 * b.depth for b in self.bars))
        what_width = min(max(len(self.what(b)) for b in self.bars), 30)
        axis = "steps →" if width == self.steps else "steps → (scaled)"
        lines.append(f"{'agent'.ljust(name_width)}  {'what'.ljust(what_width)}  "
                     f"{axis.ljust(width)}  tokens in → out")
        rows = [self.row_text(b, width, name_width, what_width) for b in self.ordered()]
        if len(rows) > TEXT_ROWS:
            rows = [*rows[:40], f"… {len(rows) - 55} more rows …", *rows[-15:]]
        lines += rows
        used = [b for b in self.bars if b.kind == "request"]
        if used:
            mark = "~" if any(b.estimated for b in used) else ""
            tokens_in = sum(b.input_tokens or 0 for b in used)
            tokens_out = sum(b.output_tokens or 0 for b in used)
            lines.append(f"Tokens of all requests: {mark}{tokens_in:,} in, {mark}{tokens_out:,} out"
                         + (" (~ = estimated)" if mark else ""))
        return "\n".join(lines)

    def ordered(self) -> list[Bar]:
        return sorted(self.bars, key=lambda b: (b.first, b.kind != "run", b.last))

    def what(self, bar: Bar) -> str:
        detail = f" ({bar.detail})" if bar.detail else ""
        return f"{bar.label}{detail}"

    def row_text(self, bar: Bar, width: int, name_width: int, what_width: int) -> str:
        first, last = self.place(bar)
        start, end = (step * width // max(self.steps, 1) for step in (first, last))
        body = "◆" if bar.kind == "note" else "█" * (end - start + 1)
        drawn = (" " * start + body).ljust(width)
        name = ("  " * bar.depth + bar.agent_id).ljust(name_width)
        what = self.what(bar)
        what = (what if len(what) <= what_width else what[:what_width - 1] + "…")
        return f"{name}  {what.ljust(what_width)}  {drawn}  {bar.tokens}".rstrip()

    def svg(self) -> str:
        from .svg import draw
        return draw(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "image/svg+xml": self.svg()}

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"<Timeline: {len(self.bars)} bars, {len(self.lanes)} lanes, axis {self.axis!r}>"


def timeline(run: Any, axis: str = "auto") -> Timeline:
    """The timeline of ``run``: a `RunResult` (a saved one too: `RunResult.load`) or its
    events. ``axis``: ``"time"`` (the clock), ``"steps"`` (the order), or ``"auto"``: the
    clock when the run took a second or more."""
    return Timeline(getattr(run, "events", run), axis)


def bars_of(events: list[Any]) -> list[Bar]:
    """The bars of a run's events: each opened by one event, closed by another; what is
    still open at the end (a run cut off) closes at the last event."""
    found: list[Bar] = []
    open_: dict[tuple, Bar] = {}

    def start(key: tuple, kind: str, index: int, event: Any, label: str) -> Bar:
        bar = Bar(kind, event.agent_id, event.depth, label, index, index, event.at, event.at)
        found.append(bar)
        open_[key] = bar
        return bar

    def close(key: tuple, index: int, event: Any, **changes: Any) -> Bar | None:
        bar = open_.pop(key, None)
        if bar is not None:
            bar.last, bar.end = index, event.at
            for name, value in changes.items():
                setattr(bar, name, value)
        return bar

    for i, e in enumerate(events):
        who, kind = e.agent_id, e.type
        if kind == "run_start":
            start((who, "run"), "run", i, e, "run")
        elif kind == "run_end":
            waiting = e.get("outcome") == "awaiting_approval"
            for key in [k for k in open_ if k[0] == who and k[1] != "run"]:
                said = "waiting" if key[1] == "wait" else "waits for a person"
                close(key, i, e, detail=said if waiting else "cut off", ok=waiting)
            if waiting:
                note(found, i, e, "paused: awaits approval")
            close((who, "run"), i, e, detail=str(e.get("outcome")),
                  ok=e.get("outcome") in ("completed", "awaiting_approval"))
        elif kind == "model_request":
            label = e.get("purpose") or f"request {e.get('turn')}"
            start((who, "request"), "request", i, e, label)
        elif kind in ("model_reply", "model_partial"):
            usage = e.get("usage") or {}
            close((who, "request"), i, e, input_tokens=usage.get("prompt_tokens"),
                  output_tokens=usage.get("completion_tokens"),
                  estimated=bool(usage.get("estimated")), ok=kind == "model_reply",
                  detail="" if kind == "model_reply" else "stopped")
        elif kind == "tool_call":
            start((who, "call", e.get("call_id")), "call", i, e, str(e.get("tool_name")))
        elif kind == "tool_result":
            ok = bool(e.get("ok"))
            close((who, "call", e.get("call_id")), i, e, ok=ok,
                  detail="" if ok else str(e.get("status")))
        elif kind == "approval_request":
            start((who, "wait"), "wait", i, e, f"approval: {e.get('tool_name')}")
        elif kind == "approval_result":
            close((who, "wait"), i, e, detail="yes" if e.get("approved") else "no")
        elif kind == "pre_compact":
            start((who, "compaction"), "compaction", i, e, "compaction")
        elif kind == "compaction":
            label = f"compaction ~{e.get('before_tokens', 0):,} → ~{e.get('after_tokens', 0):,}"
            if close((who, "compaction"), i, e, label=label) is None:
                start((who, "compaction"), "compaction", i, e, label)
                open_.pop((who, "compaction"))
        elif kind in NOTES or kind.endswith(("_refused", "_pushback")):
            note(found, i, e, NOTES.get(kind, kind.replace("_", " ")))
    last = len(events) - 1
    for key in list(open_):
        close(key, last, events[last], detail="cut off", ok=False)
    return found


def counted(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def note(found: list[Bar], index: int, event: Any, label: str) -> None:
    found.append(Bar("note", event.agent_id, event.depth, label, index, index, event.at,
                     event.at))


def pack(bars: list[Bar]) -> None:
    """Give each bar a row in its agent's lane: the first row free at its first step, so
    calls that ran at once (and a wait inside a call) sit one under the other."""
    ends: dict[str, list[int]] = {}
    for bar in sorted(bars, key=lambda b: (b.first, b.last)):
        if bar.kind in ("run", "note"):
            continue
        rows = ends.setdefault(bar.agent_id, [])
        bar.row = next((r for r, end in enumerate(rows) if end < bar.first), len(rows))
        if bar.row == len(rows):
            rows.append(bar.last)
        rows[bar.row] = bar.last
