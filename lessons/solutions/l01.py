"""Reference solutions for lesson 01 (same names as the exercise stubs)."""

from __future__ import annotations

import json
from collections.abc import Callable

from harness import say


def run_loop(model, functions: dict[str, Callable], schemas: list[dict], task: str,
             max_turns: int = 5) -> list[dict]:
    """A minimal agent loop: every tool call gets exactly one tool message."""
    messages = [{"role": "user", "content": task}]
    for _ in range(max_turns):
        reply = model.complete(messages, schemas, "auto")
        message = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        messages.append(message)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            name = call["function"]["name"]
            if name not in functions:
                output = f"Error: unknown tool '{name}'"
            else:
                try:
                    args = json.loads(call["function"]["arguments"] or "{}")
                    output = str(functions[name](**args))
                except Exception as exc:
                    output = f"Error: {type(exc).__name__}: {exc}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return messages


def answer_undelivered(messages: list[dict]) -> dict:
    """Name the orders of the last round whose status is not "delivered"."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    records = [json.loads(m["content"]) for m in messages[last + 1:] if m["role"] == "tool"]
    waiting = [f"{r['id']} ({r['status']})" for r in records if r["status"] != "delivered"]
    if not waiting:
        return say("All of these orders have been delivered.")
    return say("Still on the way: " + ", ".join(waiting) + ".")
