"""The plan panel: watch the plan, the current step and the cost while an agent runs.

    panel = PlanPanel()
    agent = Agent(model, tools, planning=True, observers=[panel])
    display(panel)            # one cell
    agent.run("...")          # the next cell: the panel changes as the events arrive

    event --> PanelState.on_event --> text pieces --+--> panel.text()  (plain text)
                                                    +--> PlanPanel     (ipywidgets view)

`PanelState` is plain Python: it works, and is tested, without a browser or ipywidgets.
`PlanPanel` only copies that state into widget traits, at most ~20 times a second
however fast events come (throttle.py), and always once more after the last one. A
streaming model's ``model_delta`` events show the answer as it is written and the tail
of the reasoning while the model thinks (`LiveReply`). It never prints, clears output
or updates a display handle, so a notebook that shows it stays stable under nbval,
which compares the panel's text as it was when ``display(panel)`` ran.
The plan is drawn by `harness.todo.render`, the formatter the `todo_write` tool result
uses too, so the model and the learner always see the same list.
"""

from __future__ import annotations

import textwrap
from collections import deque

from ..events import Event
from ..todo import MARKERS, TodoItem, progress, render
from .display import format_event, plural, short, tokens
from .reply import LiveReply


def _replied(event: Event) -> str:
    calls = event.message.get("tool_calls") or []
    return f"model asked for {plural(len(calls), 'tool call')}" if calls else "model answered"


STEPS = {  # what an agent is doing right after each of these events
    "model_request": lambda e: f"model thinking (turn {e.turn})",
    "model_reply": _replied,
    "tool_call": lambda e: f"running tool {e.tool_name}",
    "approval_request": lambda e: f"waiting for approval: {e.tool_name}",
    "approval_result": lambda e: (f"running tool {e.tool_name}" if e.approved
                                  else f"{e.tool_name} was denied"),
    "tool_result": lambda e: f"{e.tool_name} {'done' if e.ok else 'failed'}",
    "subagent_start": lambda e: f"waiting for {e.child_id}",
}
WRITING = {"text": "model writing its answer", "reasoning": "model reasoning",
           "tool_call": "model writing a tool call"}
BUDGETS = {"requests": "requests", "tool_calls": "tool calls", "input_tokens": "input tokens"}
UNLOGGED = frozenset({"model_request", "model_reply", "tool_call", "plan_update", "stop"})
# (events the log never shows: format_event has no line for them; skipping it is faster)


class PanelState:
    """What the panel shows, built from events alone. Deterministic text, no widgets."""

    def __init__(self, title: str = "Agent plan", log_lines: int = 8) -> None:
        self.title, self.log_lines = title, log_lines
        self.reset()

    def reset(self) -> None:
        """Forget the last run. A new top-level ``run_start`` does this by itself."""
        self.status, self.task = "waiting for a run", None
        self.items: list[TodoItem] = []
        self.change: dict | None = None
        self.steps: dict[int, tuple[str, str]] = {}  # depth -> (agent_id, what it does now)
        self.log: deque[str] = deque(maxlen=self.log_lines)
        self.tokens: dict[str, int] = {}  # agent_id -> total tokens of its replies
        self.estimated = False
        self.context: tuple[str, dict] = ("main", {})  # (agent_id, usage of the last reply)
        self.model: str | None = None
        self.window: int | None = None  # the model's context window, when known
        self.limits: dict[str, int | None] = {}  # the run's budget (run_start)
        self.used = dict.fromkeys(BUDGETS, 0)  # counted from events as the budget counts
        self.delegated = False  # a sub-agent sent a request: turns alone undercount them
        self.children: dict[str, dict] = {}
        self.end: dict | None = None
        self.live = LiveReply()

    def on_event(self, event: Event) -> None:
        """Observer entry point: ``Agent(..., observers=[state])`` calls it for every event.

        It runs for every event of every run, so it only records; the text of what it
        recorded is made when the panel is drawn (`step_text`, `LiveReply.lines`).
        """
        kind = event.type
        if kind == "model_delta":  # the hot path: many a second while a model streams
            if event.data["kind"] in WRITING:
                self.live.add(event.data["kind"], event.data)
                self.steps[event.depth] = (event.agent_id, event)
            return
        if kind == "run_start" and event.depth == 0:
            self.reset()
            self.status, self.task = "running", event.task
            self.model, self.window = event.get("model"), event.get("context_window")
            self.limits = event.get("limits") or {}
        if kind in ("model_request", "model_reply") and not self.live.empty():
            self.live = LiveReply()  # a new reply starts; or the whole one has arrived
        if kind not in UNLOGGED:
            line = format_event(event)
            if line:
                self.log.append(line)
        if kind in STEPS:
            if self.steps and max(self.steps) > event.depth:  # a sub-agent has finished
                self.steps = {d: s for d, s in self.steps.items() if d < event.depth}
            self.steps[event.depth] = (event.agent_id, event)
        d = event.data
        if kind == "model_request":
            self.used["requests"] += 1
            self.delegated = self.delegated or event.depth > 0
        elif kind == "tool_result" and d.get("ran"):
            self.used["tool_calls"] += 1
        elif kind == "model_reply":
            self.tokens[event.agent_id] = (self.tokens.get(event.agent_id, 0)
                                           + d["usage"].get("total_tokens", 0))
            self.used["input_tokens"] += d["usage"].get("prompt_tokens", 0)
            self.estimated = self.estimated or bool(d["usage"].get("estimated"))
            self.context = (event.agent_id, d["usage"])
        elif kind == "plan_update" and event.depth == 0:
            self.items = [TodoItem(**todo) for todo in d["todos"]]
            self.change = {k: d.get(k, []) for k in ("added", "removed", "status_changes")}
        elif kind in ("subagent_start", "subagent_end"):
            self.children[d["child_id"]] = {"task": d["task"], "tool_calls": d.get("tool_calls", 0),
                                            "outcome": d.get("outcome", "running")}
            if "usage" in d:  # the child's own total, the same number the run rolls up
                self.tokens[d["child_id"]] = d["usage"].get("total_tokens", 0)
        elif kind == "run_end" and event.depth > 0:
            self.steps.pop(event.depth, None)
        elif kind == "run_end":  # its turns are the top agent's; requests count them all
            self.end = dict(d, during=self.step_text(), requests=self.used["requests"],
                            delegated=self.delegated)
            self.status, self.steps = d["outcome"], {}
            self.live.stopped = True  # what was being written stays, marked as stopped

    # -- the pieces of the view: text() and the widget both use them ------------------

    def done(self) -> int:
        return sum(item.status == "completed" for item in self.items)

    def step_text(self) -> str:
        """The deepest agent's current step: what is happening right now."""
        if not self.steps:
            return ""
        agent_id, event = self.steps[max(self.steps)]
        if event.type == "model_delta":
            return f"{agent_id}: {WRITING[event.data['kind']]}"
        return f"{agent_id}: {STEPS[event.type](event)}"

    def change_text(self) -> str:
        """What the last plan update changed, from the plan_update event's own fields."""
        if self.change is None:
            return ""
        quoted = {k: ", ".join(f'"{short(c, 40)}"' for c in self.change[k])
                  for k in ("added", "removed")}
        parts = [f"{k} {v}" for k, v in quoted.items() if v]
        parts += [f'"{short(c, 40)}" {MARKERS[old]} → {MARKERS[new]}'
                  for c, old, new in self.change["status_changes"]]
        return "; ".join(parts) or "nothing (the same plan was sent again)"

    def outcome_text(self) -> str:
        """How the run ended, with the answer or the error (empty while it runs)."""
        if self.end is None:
            return ""
        end = self.end
        text = f"{end['outcome']} after {plural(end['turns'], 'turn')}"
        if end["delegated"]:  # turns are the top agent's requests; the sub-agents' add up
            text += f" ({plural(end['requests'], 'request')} with sub-agents)"
        if end.get("error"):
            text += f": {short(end['error'], 80)}"
        if end["outcome"] != "completed" and end["during"]:
            text += f" — stopped at {end['during']}"
        return text + (f' — "{short(end["final"], 80)}"' if end.get("final") else "")

    def facts(self) -> list[tuple[str, str]]:
        """The labelled lines under the plan: what happens now (or how it ended), what changed."""
        facts = [("Now", self.step_text()), ("Outcome", self.outcome_text()),
                 ("Last change", self.change_text())]
        return [(label, value) for label, value in facts if value]

    def usage_lines(self) -> list[str]:
        """The model, tokens (a small tree when it delegated), the context, the budget."""
        lines = [f"Model: {self.model}"] if self.model else []
        if self.tokens:
            mark = "~" if self.estimated else ""
            agent_id, usage = self.context
            lines.append(f"Tokens: {tokens(usage)} last request, {mark}"
                         f"{sum(self.tokens.values()):,} this run"
                         + (" (~ = estimated)" if mark else ""))
            if self.children:
                main = sum(n for agent, n in self.tokens.items() if agent not in self.children)
                lines.append(f"  main agent {mark}{main:,}")
                lines += [f"  └─ {child_id} {mark}{self.tokens.get(child_id, 0):,}: "
                          f"{c['outcome']}, {plural(c['tool_calls'], 'tool call')}, "
                          f'"{short(c["task"], 40)}"' for child_id, c in self.children.items()]
            window = ""
            if self.window:  # the model's window, when known (settings' context_window)
                share = 100 * usage.get("prompt_tokens", 0) / self.window
                window = f" of {self.window:,} ({share:.0f}%)"
            lines.append(f"Context: {tokens(usage, 'prompt_tokens')} tokens{window}, "
                         f"last request ({agent_id})")
        if self.limits:  # input tokens are estimated when the replies' usage was
            mark = {"input_tokens": "~" if self.estimated else ""}
            lines.append("Budget: " + ", ".join(
                f"{mark.get(name, '')}{self.used[name]:,}" + (f"/{limit:,}" if limit else "")
                + f" {label}" for name, label in BUDGETS.items()
                if (limit := self.limits.get(name)) or self.used[name]))
        return lines

    def text(self) -> str:
        """The whole panel as plain text: what nbval compares and a terminal can print."""
        lines = [f"{self.title}: {self.status}"]
        if self.task:
            lines.append(_fit(f"Task: {short(self.task, 200)}"))
        lines += ["  " + line for line in render(self.items).splitlines()]
        if self.items:
            bar = "#" * round(10 * self.done() / len(self.items))
            lines.append(f"Progress: {progress(self.items)} [{bar:-<10}]")
        lines += [_fit(f"{label}: {value}") for label, value in self.facts()]
        lines += [_fit(" ".join(f"{label}: {value}".split())) for label, value in
                  self.live.lines()]
        if self.log:
            lines += ["Log:"] + ["  " + line for line in self.log]
        return "\n".join(lines + self.usage_lines())


def _fit(line: str, width: int = 96) -> str:
    """Wrap a long text line at word boundaries (a notebook shows about 100 characters)."""
    return textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False)
