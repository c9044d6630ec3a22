"""The plan panel: watch the plan, the current step and the cost while an agent runs.

    panel = PlanPanel()
    agent = Agent(model, tools, planning=True, observers=[panel])
    display(panel)            # one cell
    agent.run("...")          # the next cell: the panel changes as the events arrive

    event --> PanelState.on_event --> text pieces --+--> panel.text()  (plain text)
                                                    +--> PlanPanel     (ipywidgets view)

`PanelState` is plain Python: it works, and is tested, without a browser or ipywidgets.
`PlanPanel` only copies that state into widget traits; it never prints, clears output
or updates a display handle, so a notebook that shows it stays stable under nbval,
which compares the panel's text as it was when ``display(panel)`` ran.
The plan is drawn by `harness.todo.render`, the same formatter the `todo_write` tool
result uses, so the model and the learner always see the same list.
"""

from __future__ import annotations

from collections import deque
from html import escape
from typing import Any

from .events import Event
from .todo import MARKERS, TodoItem, progress, render

__all__ = ["PanelState", "PlanPanel", "format_event"]

LOG_LINES = 8
FAILED = {"error": "failed", "blocked": "blocked", "unknown_tool": "unknown tool",
          "invalid_arguments": "bad arguments", "duplicate_id": "duplicate call id"}


def _short(text: Any, limit: int = 60) -> str:
    """The first line, at most ``limit`` characters: enough to recognise, never a wall."""
    line = " ".join(next((ln for ln in str(text).splitlines() if ln.strip()), "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tokens(usage: dict) -> str:
    mark = "~" if usage.get("estimated") else ""
    return f"{mark}{usage.get('total_tokens', 0):,}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def format_event(event: Event) -> str | None:
    """One human line for an interesting event, indented by depth; None for the rest."""
    d = event.data
    if event.type == "run_start" and event.depth == 0:
        line = f"▶ task: {_short(d['task'])}"
    elif event.type == "tool_result":
        how = "" if d["ok"] else " " + FAILED.get(d.get("status"), "failed")
        line = f"{'✓' if d['ok'] else '✗'} {d['tool_name']}{how}: {_short(d['output'])}"
    elif event.type == "reminder":
        line = f"⟲ reminder: plan not updated for {_count(d['rounds'], 'tool round')}"
    elif event.type == "stop_gate":
        line = f"✋ stop gate: answered with {_count(len(d['open_items']), 'open item')}, pushed back"
    elif event.type == "subagent_start":
        line = f"↳ delegate to {d['child_id']}: {_short(d['task'])}"
    elif event.type == "subagent_end":
        line = (f"↳ {d['child_id']} {d['outcome']}: {_count(d['tool_calls'], 'tool call')}, "
                f"{_tokens(d['usage'])} tokens")
    elif event.type == "approval_request":
        line = f"? waiting for approval: {d['tool_name']}"
    elif event.type == "approval_result":
        line = f"{'✓ approved' if d['approved'] else '✗ denied'}: {d['tool_name']}"
    elif event.type == "run_end" and event.depth == 0:
        error = f": {_short(d['error'])}" if d.get("error") else ""
        line = f"■ {d['outcome']} after {_count(d['turns'], 'turn')}{error}"
    else:
        return None
    return "  " * event.depth + line


def _calls(event: Event) -> str:
    calls = event.message.get("tool_calls") or []
    return f"model asked for {_count(len(calls), 'tool call')}" if calls else "model answered"


STEPS = {  # what an agent is doing right after each of these events
    "model_request": lambda e: f"model thinking (turn {e.turn})",
    "model_reply": _calls,
    "tool_call": lambda e: f"running tool {e.tool_name}",
    "approval_request": lambda e: f"waiting for approval: {e.tool_name}",
    "approval_result": lambda e: (f"running tool {e.tool_name}" if e.approved
                                  else f"{e.tool_name} was denied"),
    "tool_result": lambda e: f"{e.tool_name} {'done' if e.ok else 'failed'}",
    "subagent_start": lambda e: f"waiting for {e.child_id}",
}


class PanelState:
    """What the panel shows, built from events alone. Deterministic text, no widgets."""

    def __init__(self, title: str = "Agent plan", log_lines: int = LOG_LINES) -> None:
        self.title, self.log_lines = title, log_lines
        self.reset()

    def reset(self) -> None:
        """Forget the last run. A new top-level ``run_start`` does this by itself."""
        self.status = "waiting for a run"
        self.task: str | None = None
        self.items: list[TodoItem] = []
        self.change: dict | None = None
        self.steps: dict[int, tuple[str, str]] = {}  # depth -> (agent_id, what it does now)
        self.log: deque[str] = deque(maxlen=self.log_lines)
        self.tokens: dict[str, int] = {}
        self.estimated = False
        self.context: tuple[str, dict] | None = None  # (agent_id, usage of the last reply)
        self.children: dict[str, dict] = {}
        self.end: dict | None = None

    def on_event(self, event: Event) -> None:
        """Observer entry point: ``Agent(..., observers=[state])`` calls it for every event."""
        if event.type == "run_start" and event.depth == 0:
            self.reset()
            self.status, self.task = "running", event.task
        line = format_event(event)
        if line:
            self.log.append(line)
        if event.type in STEPS:
            self.steps = {d: s for d, s in self.steps.items() if d < event.depth}
            self.steps[event.depth] = (event.agent_id, STEPS[event.type](event))
        handler = getattr(self, f"_on_{event.type}", None)
        if handler:
            handler(event)

    # -- what each event changes -----------------------------------------------------

    def _on_model_reply(self, event: Event) -> None:
        usage = event.usage
        self.tokens[event.agent_id] = self.tokens.get(event.agent_id, 0) + usage.get("total_tokens", 0)
        self.estimated = self.estimated or bool(usage.get("estimated"))
        self.context = (event.agent_id, usage)

    def _on_plan_update(self, event: Event) -> None:
        if event.depth == 0:
            self.items = [TodoItem(**todo) for todo in event.todos]
            self.change = {k: event.get(k, []) for k in ("added", "removed", "status_changes")}

    def _on_subagent_start(self, event: Event) -> None:
        self.children[event.child_id] = {"task": event.task, "outcome": "running", "tool_calls": 0}

    def _on_subagent_end(self, event: Event) -> None:
        self.children[event.child_id].update(outcome=event.outcome, tool_calls=event.tool_calls)
        self.tokens[event.child_id] = event.usage.get("total_tokens", 0)

    def _on_run_end(self, event: Event) -> None:
        if event.depth > 0:
            self.steps.pop(event.depth, None)
            return
        self.end = dict(event.data, during=self.step_text())
        self.status, self.steps = event.outcome, {}

    # -- the pieces of the view; text() and the widget both use them ------------------

    def step_text(self) -> str:
        """The deepest agent's current step: what is happening right now."""
        if not self.steps:
            return ""
        agent_id, text = self.steps[max(self.steps)]
        return f"{agent_id}: {text}"

    def change_text(self) -> str:
        """What the last plan update changed, from the plan_update event's own fields."""
        if self.change is None:
            return ""
        parts = [f'+ "{_short(c, 40)}"' for c in self.change["added"]]
        parts += [f'- "{_short(c, 40)}"' for c in self.change["removed"]]
        parts += [f'"{_short(c, 40)}" {MARKERS[old]} → {MARKERS[new]}'
                  for c, old, new in self.change["status_changes"]]
        return "; ".join(parts) or "nothing (the same plan was sent again)"

    def progress_bar(self, width: int = 10) -> str:
        done = sum(item.status == "completed" for item in self.items)
        filled = round(width * done / len(self.items)) if self.items else 0
        return "[" + "#" * filled + "-" * (width - filled) + "]"

    def usage_lines(self) -> list[str]:
        """Tokens this run, the context of the last request, and one line per delegation."""
        if not self.tokens:
            return []
        mark = "~" if self.estimated else ""
        total = sum(self.tokens.values())
        agent_id, usage = self.context
        context = f"{'~' if usage.get('estimated') else ''}{usage.get('prompt_tokens', 0):,}"
        lines = [f"Usage: {mark}{total:,} tokens this run; "
                 + f"last request {context} tokens of context ({agent_id})"]
        if self.children:
            main = sum(n for a, n in self.tokens.items() if a not in self.children)
            lines.append(f"  main agent {mark}{main:,}")
            for child_id, child in self.children.items():
                lines.append(f"  └─ {child_id} {mark}{self.tokens.get(child_id, 0):,}: "
                             f"{child['outcome']}, {_count(child['tool_calls'], 'tool call')}, "
                             f'"{_short(child["task"], 40)}"')
        return lines

    def outcome_text(self) -> str:
        """How the run ended, with the answer or the error (empty while it runs)."""
        if self.end is None:
            return ""
        end, text = self.end, f"{self.end['outcome']} after {_count(self.end['turns'], 'turn')}"
        if end.get("error"):
            text += f": {_short(end['error'], 80)}"
        if end["outcome"] != "completed" and end["during"]:
            text += f" (while {end['during']})"
        return text + (f' — "{_short(end["final"], 80)}"' if end.get("final") else "")

    def text(self) -> str:
        """The whole panel as plain text: what nbval compares and a terminal can print."""
        lines = [f"{self.title}: {self.status}"]
        if self.task:
            lines.append(f"Task: {_short(self.task, 100)}")
        lines += ["  " + line for line in render(self.items).splitlines()]
        if self.items:
            lines.append(f"Progress: {progress(self.items)} {self.progress_bar()}")
        for label, value in (("Last change", self.change_text()), ("Now", self.step_text())):
            if value:
                lines.append(f"{label}: {value}")
        if self.log:
            lines += ["Log:"] + ["  " + line for line in self.log]
        lines += self.usage_lines()
        if self.end:
            lines.append(f"Outcome: {self.outcome_text()}")
        return "\n".join(lines)


STATUS_COLOR = {"running": "var(--jp-brand-color1, #1976d2)", "completed": "#2e7d32",
                "waiting for a run": "var(--jp-ui-font-color2, #757575)",
                "model_error": "#c62828"}
MUTED = "color: var(--jp-ui-font-color2, #757575)"
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 12.5px"


class PlanPanel:
    """The live plan panel for JupyterLab: a thin ipywidgets view over a `PanelState`.

    ``display(panel)`` shows it; ``panel.text()`` (and ``repr(panel)``) give the same
    content as text. The widget itself is ``panel.widget``, for use inside other layouts.
    """

    def __init__(self, title: str = "Agent plan") -> None:
        try:
            import ipywidgets as w
        except ImportError as exc:
            raise ImportError("PlanPanel needs ipywidgets: pip install ipywidgets "
                              "(or use PanelState for a text-only panel)") from exc
        self.state = PanelState(title)
        self.header, self.plan, self.details = w.HTML(), w.HTML(), w.HTML()
        self.bar = w.IntProgress(min=0, max=1, layout=w.Layout(width="220px", height="14px"))
        self.progress = w.HTML()
        self.plan.add_class("harness-plan")
        self.widget = w.VBox(
            [self.header, self.plan, w.HBox([self.bar, self.progress]), self.details],
            layout=w.Layout(border="1px solid var(--jp-border-color2, #ddd)",
                            padding="4px 12px 8px", max_width="760px"))
        self.widget.add_class("harness-plan-panel")
        self._refresh()

    def on_event(self, event: Event) -> None:
        self.state.on_event(event)
        self._refresh()

    def reset(self) -> None:
        self.state.reset()
        self._refresh()

    def text(self) -> str:
        return self.state.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The widget view, with the panel's full text as text/plain (not a truncated repr)."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text()
        return bundle

    def _refresh(self) -> None:
        """Copy the state into widget traits; unchanged values send nothing."""
        s = self.state
        color = STATUS_COLOR.get(s.status, "#b26a00")
        task = f'<div style="{MUTED}">{escape(_short(s.task, 100))}</div>' if s.task else ""
        self.header.value = (f'<div style="line-height:1.5"><b>{escape(s.title)}</b> '
                             f'<span style="color:{color}">● {escape(s.status)}</span>{task}</div>')
        rows = [_plan_row(item) for item in s.items] or [f'<div style="{MUTED}">{escape(render([]))}</div>']
        self.plan.value = f'<div style="{MONO}; line-height:1.6; margin:4px 0">{"".join(rows)}</div>'
        done = sum(item.status == "completed" for item in s.items)
        self.bar.max, self.bar.value = max(len(s.items), 1), done
        self.bar.bar_style = "success" if s.items and done == len(s.items) else ""
        self.progress.value = f'<span style="{MUTED}; padding-left:8px">{progress(s.items)}</span>'
        self.details.value = _details_html(s)


def _plan_row(item: TodoItem) -> str:
    line = escape(render([item]))
    if item.status == "in_progress":
        return (f'<div style="background:var(--jp-brand-color3, #e3f2fd); font-weight:600; '
                f'border-radius:3px; padding:0 4px; margin:0 -4px">{line}</div>')
    return f'<div style="{MUTED if item.status == "completed" else ""}">{line}</div>'


def _details_html(s: PanelState) -> str:
    rows = [(label, value) for label, value in (("Last change", s.change_text()),
                                                ("Now", s.step_text()),
                                                ("Outcome", s.outcome_text())) if value]
    html = "".join(f'<div><span style="{MUTED}">{label}:</span> {escape(value)}</div>'
                   for label, value in rows)
    if s.log:
        log = "<br>".join(escape(line) for line in s.log)
        html += (f'<div style="{MONO}; {MUTED}; margin-top:6px; white-space:pre; '
                 f'overflow-x:auto">{log}</div>')
    if s.tokens:
        usage = "<br>".join(escape(line) for line in s.usage_lines())
        html += f'<div style="{MONO}; margin-top:6px; white-space:pre">{usage}</div>'
    return f'<div style="line-height:1.5">{html}</div>'
