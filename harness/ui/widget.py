"""`PlanPanel`: the plan panel as ipywidgets, for JupyterLab (the state is panel.py's).

    event --> PanelState.on_event (under a lock) --> Throttle.request --> _refresh
                                                        at most every ~45 ms, and once
                                                        more after the last event

Each piece of the view is its own widget (header, plan, bar, facts, the reply being
written, the log), so a redraw sends only the pieces that changed: a streamed word
does not send the log again.
"""

from __future__ import annotations

import threading
from html import escape
from typing import Any

from ..events import Event
from ..todo import TodoItem, progress, render
from .display import short
from .panel import PanelState
from .reply import LiveReply
from .throttle import Throttle

MUTED = "color: var(--jp-ui-font-color2, #757575)"
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 12.5px"
STATUS_COLOR = {"running": "var(--jp-brand-color1, #1976d2)", "completed": "#2e7d32",
                "waiting for a run": "var(--jp-ui-font-color2, #757575)"}  # else amber


class PlanPanel:
    """The live plan panel for JupyterLab: a thin ipywidgets view over a `PanelState`.

    ``display(panel)`` shows it; ``panel.text()`` (and ``repr(panel)``) give the same
    content as text. The widget itself is ``panel.widget``, for use inside other layouts.
    The view is redrawn at most once every ``interval`` seconds (0: after every event),
    and always after the last event; ``panel.throttle.draws`` counts the redraws.
    """

    def __init__(self, title: str = "Agent plan", *, interval: float = 0.045) -> None:
        try:
            import ipywidgets as w
        except ImportError as exc:
            raise ImportError("PlanPanel needs ipywidgets: pip install ipywidgets "
                              "(or use PanelState for a text-only panel)") from exc
        self.state = PanelState(title)
        self.header, self.plan, self.progress, self.details, self.live, self.log = (
            w.HTML() for _ in range(6))
        self.bar = w.IntProgress(min=0, max=1, layout=w.Layout(width="220px", height="14px"))
        bar_row = w.HBox([self.bar, self.progress], layout=w.Layout(align_items="center"))
        self.widget = w.VBox([self.header, self.plan, bar_row, self.details, self.live,
                              self.log],
                             layout=w.Layout(border="1px solid var(--jp-border-color2, #ddd)",
                                             padding="4px 12px 8px", max_width="760px"))
        self.widget.add_class("harness-plan-panel")
        self.plan.add_class("harness-plan")
        self._lock = threading.RLock()  # events may come from a model's streaming thread
        self.throttle = Throttle(self._refresh, interval)
        self._refresh()

    def on_event(self, event: Event) -> None:
        with self._lock:
            self.state.on_event(event)
        if event.type == "run_end" and event.depth == 0:
            self.throttle.flush()  # the final picture at once
        else:
            self.throttle.request()

    def reset(self) -> None:
        with self._lock:
            self.state.reset()
        self.throttle.flush()

    def text(self) -> str:
        with self._lock:
            return self.state.text()

    def __repr__(self) -> str:
        if "_lock" not in self.__dict__:  # __init__ failed before the panel was built
            return "PlanPanel(not built)"
        return self.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The widget view, with the panel's full text as text/plain (not a truncated repr)."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text()
        return bundle

    def _refresh(self) -> None:
        """Copy the state into widget traits; an unchanged value sends nothing."""
        with self._lock:
            values = self._values()
        for widget, traits in values:
            with widget.hold_sync():  # one message per widget that changed
                for name, value in traits.items():
                    setattr(widget, name, value)

    def _values(self) -> list[tuple[Any, dict]]:
        """Every trait of the view, computed from the state (under the lock)."""
        s = self.state
        color = STATUS_COLOR.get(s.status, "#b26a00")
        task = f'<div style="{MUTED}">{escape(short(s.task, 100))}</div>' if s.task else ""
        header = (f'<div style="line-height:1.5"><b>{escape(s.title)}</b> <span '
                  f'style="color:{color}">● {escape(s.status)}</span>{task}</div>')
        rows = "".join(_plan_row(item) for item in s.items)
        rows = rows or f'<div style="{MUTED}">{escape(render([]))}</div>'
        done = s.items and s.done() == len(s.items)
        html = "".join(f'<div><span style="{MUTED}">{label}:</span> {escape(value)}</div>'
                       for label, value in s.facts())
        return [
            (self.header, {"value": header}),
            (self.plan, {"value": f'<div style="{MONO}; line-height:1.6; margin:4px 0">'
                                  f'{rows}</div>'}),
            (self.bar, {"max": max(len(s.items), 1), "value": s.done(),
                        "bar_style": "success" if done else ""}),
            (self.progress, {"value": f'<span style="{MUTED}; padding-left:8px">'
                                      f'{progress(s.items)}</span>'}),
            (self.details, {"value": f'<div style="line-height:1.5">{html}'
                                     f'{_block(s.usage_lines(), "")}</div>'}),
            (self.live, {"value": _live(s.live, reserve=s.status == "running")}),
            (self.log, {"value": _block(list(s.log), MUTED)}),
        ]


def _block(lines: list[str], style: str) -> str:
    if not lines:
        return ""
    return (f'<div style="{MONO}; {style}; margin-top:6px; line-height:1.5; white-space:pre-wrap">'
            f'{"<br>".join(escape(line) for line in lines)}</div>')


def _live(live: LiveReply, reserve: bool = False) -> str:
    """The reply being written: reasoning muted and in italics, the answer as written.
    While the run goes, its room is kept (``reserve``), so the panel does not jump as
    lines come and go between requests."""
    styles = {"Thinking": f"{MUTED}; font-style:italic", "Writing": MUTED}
    lines = "".join(f'<div style="{styles.get(label, "")}; white-space:pre-wrap; margin-top:4px">'
                    f'<span style="{MUTED}">{escape(label)}:</span> {escape(value)}</div>'
                    for label, value in live.lines())
    return f'<div style="min-height:6em">{lines}</div>' if reserve else lines


def _plan_row(item: TodoItem) -> str:
    """One plan line; the item in progress stands out, finished ones step back."""
    line = escape(render([item]))
    if item.status == "in_progress":
        return (f'<div style="background:var(--jp-brand-color4, #e3f2fd); font-weight:600; '
                f'border-left:3px solid var(--jp-brand-color1, #1976d2); padding-left:5px; '
                f'margin-left:-8px">{line}</div>')
    return f'<div style="{MUTED if item.status == "completed" else ""}">{line}</div>'
