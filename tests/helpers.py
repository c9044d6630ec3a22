"""Tiny builders for scripted model steps, shared by the test files.

    ScriptedModel([step(call("c1", "add", {"a": 2, "b": 3})), final("5")])
"""

from __future__ import annotations

import json


def call(call_id: str, name: str, args: dict | str | None = None) -> dict:
    """One tool call in the wire format; a dict ``args`` is sent as its JSON string."""
    arguments = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def step(*calls: dict) -> dict:
    """An assistant message that calls these tools (in this order, in one reply)."""
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def final(text: str) -> dict:
    """An assistant message that answers without calling a tool."""
    return {"role": "assistant", "content": text}
