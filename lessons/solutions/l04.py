"""Reference solutions for lesson 04 (the plan tool, `todo_write`)."""

from __future__ import annotations

import json

from harness import say, tool_call

STATUSES = ("pending", "in_progress", "completed")
MAX_ITEMS = 20


def update_plan(plan: list[dict], new_items: list[dict] | None) -> list[dict]:
    """Check every rule first; then replace plan's contents in place (copies) and return it."""
    if new_items is None:
        raise ValueError("todos is required; send [] to clear the plan")
    if not isinstance(new_items, list):
        raise ValueError(f"todos must be a list of items, got {type(new_items).__name__}")
    if len(new_items) > MAX_ITEMS:
        raise ValueError(f"a plan holds at most {MAX_ITEMS} items, got {len(new_items)}")
    new = []
    for n, item in enumerate(new_items, 1):
        if not isinstance(item, dict) or set(item) != {"content", "status"}:
            raise ValueError(f"item {n} must have exactly content and status, got {item!r}")
        if not isinstance(item["content"], str) or not item["content"].strip():
            raise ValueError(f"item {n}: content must be text that is not blank")
        if item["status"] not in STATUSES:
            raise ValueError(f"item {n}: status must be one of {STATUSES}")
        new.append(dict(item))
    if sum(item["status"] == "in_progress" for item in new) > 1:
        raise ValueError("at most one item may be in_progress")
    plan[:] = new
    return plan


STEPS = ["Look up order ORD-1003", "Read the shipping policy", "Save a note in notes/ORD-1003.md"]
RECORD, POLICY = "data/records/ORD-1003.json", "docs/policies/shipping.md"


def _plan_at(step: int) -> dict:
    """The whole plan with items before ``step`` completed and item ``step`` in progress."""
    def status(i: int) -> str:
        return "completed" if i < step else "in_progress" if i == step else "pending"

    return tool_call("todo_write", todos=[{"content": c, "status": status(i)}
                                          for i, c in enumerate(STEPS)])


def _read(messages: list[dict], path: str) -> str:
    """What read_file returned for ``path`` in this run."""
    ids = {c["id"] for m in messages if m["role"] == "assistant"
           for c in m.get("tool_calls") or ()
           if c["function"]["name"] == "read_file"
           and json.loads(c["function"]["arguments"]).get("path") == path}
    return next(m["content"] for m in messages
                if m["role"] == "tool" and m["tool_call_id"] in ids)


def _note(messages: list[dict]) -> dict:
    order = json.loads(_read(messages, RECORD))
    standard = next(line for line in _read(messages, POLICY).splitlines()
                    if line.startswith("Standard"))
    text = f"{order['id']} ({order['item']}) is {order['status']}. Policy: {standard}\n"
    return tool_call("write_file", path="notes/ORD-1003.md", content=text)


def plan_steps() -> list:
    """The scripted model's replies for SHIPPING_TASK: each item in_progress while its
    work runs, the note built from what the tools returned."""
    return [
        _plan_at(0),
        tool_call("read_file", path=RECORD),
        _plan_at(1),
        tool_call("read_file", path=POLICY),
        _plan_at(2),
        _note,
        _plan_at(3),
        say("Saved the status note in notes/ORD-1003.md; every item is done."),
    ]
