"""Events: every step of a run, one record that hooks, observers and ``RunResult`` all see.

    run_start -> model_request -> model_reply -> tool_call -> tool_result -> ... -> run_end
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

EVENTS = {  # type: its fields (every event also has type, agent_id, depth); extensions add theirs
    "run_start": "task, tools, model, context_window, limits",
    "model_request": "turn, n_messages, tool_choice; purpose (\"summary\": not a turn), sent",
    "model_delta": "kind (text, reasoning, tool_call), text; index, name (of a call)",
    "model_reply": "message, usage, finish_reason, reasoning, refusal; purpose",
    "model_partial": "text, reasoning, call, arguments (what came of a stopped reply)",
    "tool_call": "call_id, tool_name, arguments, runnable; writes (a tool that writes)",
    "approval_request": "tool_name, arguments",
    "approval_result": "tool_name, approved",
    "tool_result": "call_id, tool_name, ok, output, status, ran",
    "plan_update": "todos, added, removed, status_changes",
    "reminder": "text, rounds",
    "stop": "final, turns; open_items, pushbacks (with planning)",
    "stop_gate": "open_items",
    "subagent_start": "child_id, task, call_id (the delegate_task call)",
    "subagent_end": "child_id, task, outcome, answer, usage, tool_calls, seconds, error, call_id",
    "hook_error": "hook, error",
    "run_end": "outcome, final, error, usage, turns, seconds",
}
TRANSIENT = frozenset({"model_delta"})  # shown to observers as they happen, never stored


@dataclass
class Event:
    """One step of a run: its type, the agent (``depth`` 0 at the top) and its data."""

    type: str
    agent_id: str = "main"
    depth: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default=0.0, compare=False)  # when (time.time()): a timeline, a span

    def __getattr__(self, name: str) -> Any:  # event.tool_name: a field of its data
        data = self.__dict__.get("data", {})  # copy and pickle ask an instance without data
        if name in data:
            return data[name]
        raise AttributeError(f"{self.__dict__.get('type', 'Event')!r} event has no field {name!r}")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "agent_id": self.agent_id, "depth": self.depth, **self.data,
                **({"at": self.at} if self.at else {})}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        d = dict(d)
        at = d.pop("at", 0.0)
        return cls(d.pop("type"), d.pop("agent_id", "main"), d.pop("depth", 0), d, at)

    def __repr__(self) -> str:
        shown = {k: repr(v) for k, v in self.data.items()}
        fields = ", ".join(f"{k}={v if len(v) <= 60 else v[:59] + '…'}" for k, v in shown.items())
        where = self.agent_id + (f"@{self.depth}" if self.depth else "")
        return f"Event({self.type} [{where}] {fields})"


def notify(observers: Iterable[Any], event: Event) -> None:
    """Hand ``event`` to each observer; a broken one is reported, and never changes the run."""
    for observer in observers:
        try:
            getattr(observer, "on_event", observer)(event)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # sys.exit() in an observer is only reported too
            warnings.warn(f"observer {observer!r} failed on a {event.type!r} event: "
                          f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=3)


def so_far(deltas: list[dict]) -> dict[str, Any]:
    """What had streamed of a stopped reply (its ``model_delta`` data): a ``model_partial``."""
    text = "".join(d["text"] for d in deltas if d.get("kind") == "text")
    reasoning = "".join(d["text"] for d in deltas if d.get("kind") == "reasoning")
    arguments = "".join(d["text"] for d in deltas if d.get("kind") == "tool_call")
    call = next((d.get("name") for d in reversed(deltas) if d.get("name")), None)
    return {"text": text, "reasoning": reasoning, "call": call, "arguments": arguments}


def frozen(value: Any) -> Any:
    """A read-only copy of JSON-like data: a call's arguments, as hooks see them, will run."""
    if isinstance(value, dict):
        return FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(frozen(v) for v in value)
    return value


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("a call's arguments are read-only: they are what will run. To stop the "
                    "call, return a reason from the tool_call hook")


class FrozenDict(dict):  # JSON, equality and pickling still work
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple:
        return FrozenDict, (dict(self),)


class FrozenList(list):
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple:
        return FrozenList, (list(self),)
