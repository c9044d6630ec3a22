"""Reference solutions for lesson 07, the whole harness.

`outputs` and `quote` are the lesson's helpers, as `lessons/headphones.py` keeps them.
"""

from __future__ import annotations

from headphones import outputs, quote

from harness import say, tool_call
from harness.events import Event

WARRANTY_STEPS = ["Look up order ORD-1001", "Find the warranty rules",
                  "Save a note in notes/ORD-1001.md"]


def warranty_plan(*statuses: str) -> dict:
    return tool_call("todo_write", todos=[{"content": c, "status": s}
                                          for c, s in zip(WARRANTY_STEPS, statuses, strict=True)])


def save_note(messages: list[dict]) -> dict:
    return tool_call("write_file", path="notes/ORD-1001.md",
                     content=outputs(messages, "search_docs")[-1])


def reply(messages: list[dict]) -> dict:
    found = outputs(messages, "search_docs")[-1]
    return say(f"Warranty: {quote(found, '1-year')} {quote(found, 'Email')}")


def fixed_script() -> list:
    """One item in progress at a time, and every item [x] before the answer."""
    return [
        warranty_plan("in_progress", "pending", "pending"),
        tool_call("read_file", path="data/records/ORD-1001.json"),
        warranty_plan("completed", "in_progress", "pending"),
        tool_call("search_docs", query="warranty year claim", max_results=2),
        tool_call("read_file", path="docs/policies/warranty.md"),
        warranty_plan("completed", "completed", "in_progress"),
        save_note,
        warranty_plan("completed", "completed", "completed"),
        reply,
    ]


class ToolCallCounter:
    """An observer: tool calls per agent_id, the sub-agents' under their own ids."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def on_event(self, event: Event) -> None:
        if event.type == "tool_call":
            self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1
