"""Reference solutions for lesson 04 (the plan tool, `todo_write`)."""

from __future__ import annotations

import json

STATUSES = ("pending", "in_progress", "completed")
MAX_ITEMS = 20


def update_plan(plan: list[dict], new_items: list[dict] | None) -> list[dict]:
    """Check every rule first; then replace plan's contents in place (copies) and return it."""
    if new_items is None:
        raise ValueError("todos is required; send [] to clear the plan")
    if len(new_items) > MAX_ITEMS:
        raise ValueError(f"a plan holds at most {MAX_ITEMS} items, got {len(new_items)}")
    new = []
    for n, item in enumerate(new_items, 1):
        if set(item) != {"content", "status"}:
            raise ValueError(f"item {n} must have exactly content and status, got {sorted(item)}")
        if not isinstance(item["content"], str) or not item["content"].strip():
            raise ValueError(f"item {n}: content must be text that is not blank")
        if item["status"] not in STATUSES:
            raise ValueError(f"item {n}: status must be one of {STATUSES}")
        new.append(dict(item))
    if sum(item["status"] == "in_progress" for item in new) > 1:
        raise ValueError("at most one item may be in_progress")
    plan[:] = new
    return plan


def _call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


STEPS = ["Look up order ORD-1003", "Read the shipping policy", "Save a note in notes/ORD-1003.md"]


def _plan_at(step: int) -> dict:
    def status(i: int) -> str:
        return "completed" if i < step else "in_progress" if i == step else "pending"

    return _call("todo_write", todos=[{"content": c, "status": status(i)}
                                      for i, c in enumerate(STEPS)])


def _note(messages: list[dict]) -> dict:
    record, policy = [m["content"] for m in messages if m["role"] == "tool"][1:4:2]
    order = json.loads(record)
    standard = next(line for line in policy.splitlines() if line.startswith("Standard"))
    text = f"{order['id']} ({order['item']}) is {order['status']}. Policy: {standard}\n"
    return _call("write_file", path="notes/ORD-1003.md", content=text)


def plan_steps() -> list:
    """The scripted model's replies for SHIPPING_TASK."""
    return [
        _plan_at(0),
        _call("read_file", path="data/records/ORD-1003.json"),
        _plan_at(1),
        _call("read_file", path="docs/policies/shipping.md"),
        _plan_at(2),
        _note,
        _plan_at(3),
        lambda messages: {"content": f"Saved the note: {messages[-3]['content']}"},
    ]
