"""Events: every step of a run, as a small record you can print, filter or save.

    run_start -> model_request -> model_reply -> tool_call -> tool_result -> ... -> run_end

Each event has a ``type``, the ``agent_id`` and ``depth`` of the agent that produced it
(0 for the top agent, 1 inside a sub-agent), and its data, readable as attributes
(``event.tool_name``) or keys (``event["tool_name"]``). Hooks, observers such as the
plan panel, and ``RunResult.events`` all see the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """One step of a run."""

    type: str
    agent_id: str = "main"
    depth: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not real attributes. Read __dict__ directly:
        # copy and pickle call this on an empty instance, before `type` or `data` exist.
        data = self.__dict__.get("data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"{self.__dict__.get('type', 'Event')!r} event has no field {name!r}")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "agent_id": self.agent_id, "depth": self.depth, **self.data}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        d = dict(d)
        return cls(d.pop("type"), d.pop("agent_id", "main"), d.pop("depth", 0), d)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={_short(v)}" for k, v in self.data.items())
        where = f"{self.agent_id}" + (f"@{self.depth}" if self.depth else "")
        return f"Event({self.type} [{where}] {fields})"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
