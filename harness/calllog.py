"""The call log: the intent of every tool call before it runs, its result after.

    log = CallLog("calls.jsonl")
    Agent(model, tools, observers=[log])

After a crash the file still names the call that was running: ``unfinished()`` lists
calls with an intent and no result. Such a call is reported, never retried.
"""

from __future__ import annotations

import json
from pathlib import Path

from .events import Event
from .tools import cap


class CallLog:
    """Intent before, result after: a record of every tool call (an `Agent` observer).

    Use it with ``Agent(..., observers=[log])``. Each entry is a dict; with ``path`` the
    entries are also appended to a JSON-lines file as they happen, so a crash leaves
    the intent of the call that was running.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.entries: list[dict] = []
        self.path = Path(path) if path else None

    def on_event(self, event: Event) -> None:
        if event.type == "tool_call":
            self._write({"phase": "intent", "agent_id": event.agent_id, "call_id": event.call_id,
                         "tool": event.tool_name, "arguments": event.arguments})
        elif event.type == "tool_result":
            self._write({"phase": "result", "agent_id": event.agent_id, "call_id": event.call_id,
                         "tool": event.tool_name, "status": event.status, "ok": event.ok,
                         "output": cap(event.output, 2000)})

    def unfinished(self) -> list[dict]:
        """Calls whose intent was logged but whose result never came: report, never retry."""
        done = {(e["agent_id"], e["call_id"]) for e in self.entries if e["phase"] == "result"}
        return [e for e in self.entries
                if e["phase"] == "intent" and (e["agent_id"], e["call_id"]) not in done]

    def _write(self, entry: dict) -> None:
        self.entries.append(entry)
        if self.path:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
