"""What had streamed of a reply that was stopped: the data of a ``model_partial`` event."""

from __future__ import annotations

from typing import Any


def so_far(deltas: list[dict]) -> dict[str, Any]:
    """The text, reasoning, call and its arguments so far, from the ``model_delta`` events."""
    text, reasoning, args = ("".join(d["text"] for d in deltas if d.get("kind") == kind)
                             for kind in ("text", "reasoning", "tool_call"))
    call = next((d.get("name") for d in reversed(deltas) if d.get("name")), None)
    return {"text": text, "reasoning": reasoning, "call": call, "arguments": args}
