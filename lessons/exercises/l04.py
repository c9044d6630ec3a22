"""Checks for lesson 04 (the plan tool, `todo_write`).

`check_update_plan` calls your function on good and bad updates and compares the plan
before and after; `check_plan_steps` runs your scripted model with ``planning=True`` and
the real tools of a fresh copy of the sample workspace.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable

from course import check
from harness import Agent, RunResult, ScriptedModel, Workspace
from harness.todo import render

SHIPPING_TASK = ("Order ORD-1003 has not arrived yet. Plan three steps: look up the order "
                 "record, read our shipping policy, and save a short status note in "
                 "notes/ORD-1003.md. Keep the plan current and finish every item.")

BASE = [{"content": "Look up the order", "status": "completed"},
        {"content": "Find the policy", "status": "in_progress"},
        {"content": "Draft the reply", "status": "pending"}]
OK = {"content": "Look up the order", "status": "completed"}

REFUSED = {  # label -> an update that breaks one rule
    "todos is None": None,
    "21 items": [{"content": f"step {i}", "status": "pending"} for i in range(21)],
    "blank content in the second item": [OK, {"content": "   ", "status": "pending"}],
    "content that is not a string": [OK, {"content": 42, "status": "pending"}],
    "an unknown status in the second item": [OK, {"content": "Reply", "status": "done"}],
    "two items in_progress": [OK, {"content": "Find the policy", "status": "in_progress"},
                              {"content": "Draft the reply", "status": "in_progress"}],
    "an unknown field": [OK, {"content": "Reply", "status": "pending", "priority": "high"}],
    "an item without a status": [OK, {"content": "Reply"}],
}


@check
def check_update_plan(update_plan: Callable) -> str:
    """Every refused update leaves the plan as it was; a valid one replaces it exactly."""
    for label, items in REFUSED.items():
        plan = copy.deepcopy(BASE)
        try:
            update_plan(plan, copy.deepcopy(items))
        except NotImplementedError:
            raise
        except ValueError:
            pass
        except Exception as exc:
            raise AssertionError(f"{label}: your function raised {type(exc).__name__} ({exc}); "
                                 "raise ValueError with the reason instead") from None
        else:
            raise AssertionError(f"{label}: update_plan accepted it; it must raise ValueError")
        if plan != BASE:
            raise AssertionError(f"{label}: the update was refused, but the plan changed to "
                                 f"{plan}. Check every item before you change anything.")
    plan = copy.deepcopy(BASE)
    new = [{"content": "Find the policy", "status": "completed"},
           {"content": "Send the reply", "status": "in_progress"}]
    returned = update_plan(plan, new)
    if plan != new:
        raise AssertionError(f"a valid update should replace the plan in place: plan is {plan}")
    if returned is not plan:
        raise AssertionError("return the plan you were given (updated in place), not a new list")
    new[0]["status"] = "pending"
    new.append({"content": "Sneaked in", "status": "pending"})
    if plan[0]["status"] != "completed" or len(plan) != 2:
        raise AssertionError("changing the caller's list afterwards changed the plan: store "
                             "copies of the items (dict(item)) and a new list")
    if update_plan(plan, []) != [] or plan != []:
        raise AssertionError("an empty list should clear the plan")
    return (f"{len(REFUSED)} bad updates were refused with the plan untouched; "
            "valid ones replaced it.")


def _calls(result: RunResult) -> list[dict]:
    return [c for m in result.messages if m["role"] == "assistant"
            for c in m.get("tool_calls") or ()]


@check
def check_plan_steps(plan_steps: Callable[[], list]) -> str:
    """Your script plans 3 items first, does the work, and finishes with every item done."""
    steps = plan_steps()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        agent = Agent(ScriptedModel(steps), ws.tools, planning=True, max_turns=16)
        result = agent.run(SHIPPING_TASK)
        calls = _calls(result)
        if not calls or calls[0]["function"]["name"] != "todo_write":
            raise AssertionError("the first tool call should be todo_write: plan before you work")
        first = json.loads(calls[0]["function"]["arguments"]).get("todos") or []
        if len(first) != 3:
            raise AssertionError(f"the first plan has {len(first)} items; plan three steps")
        failed = [e for e in result.events if e.type == "tool_result" and not e.ok]
        if failed:
            raise AssertionError(f"the call to {failed[0].tool_name} was refused: "
                                 f"{failed[0].output}")
        if result.outcome != "completed":
            gate = any(e.type == "stop_gate" for e in result.events)
            why = (" The final answer came while the plan had open items, so the harness "
                   "pushed back and asked for one more reply." if gate else "")
            raise AssertionError(f"the run ended {result.outcome!r}"
                                 f"{': ' + result.error if result.error else ''}.{why}")
        if len(result.plan) != 3 or any(i.status != "completed" for i in result.plan):
            raise AssertionError(f"the final plan should be 3 items, all [x]; it is:\n"
                                 f"{result.plan_text()}")
        if [i.content for i in result.plan] != [t.get("content") for t in first]:
            raise AssertionError("the final plan's items differ from the planned ones: keep the "
                                 "same three items and change only their status")
        names = {c["function"]["name"] for c in calls}
        if not {"read_file", "write_file"} <= names and not {"run_shell", "write_file"} <= names:
            raise AssertionError("do the work with the tools: read the order and the policy, "
                                 "then write the note")
        if ws.list_files("notes/ORD-1003.md") != "notes/ORD-1003.md":
            raise AssertionError("notes/ORD-1003.md was not written")
        if not ws.read_file("notes/ORD-1003.md").strip():
            raise AssertionError("notes/ORD-1003.md is empty")
    return f"the run ended completed with the plan\n{render(result.plan)}"
