"""Checks for lesson 04 (the plan tool, `todo_write`).

`check_update_plan` calls your function on good and bad updates and compares the plan
before and after; `check_plan_steps` runs your scripted model with ``planning=True`` and
the real tools of a fresh copy of the sample workspace, whose order record and shipping
policy it rewrites first with values it picks, so only a note built from what the tools
returned can pass.
"""

from __future__ import annotations

import copy
import json
import random
import tempfile
from collections.abc import Callable

from course import check
from exercises.plan_progress import check_plan_moved_with_the_work
from harness import Agent, ScriptedModel, Workspace
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
    "one item, not in a list": {"content": "Reply", "status": "pending"},
    "a string, not a list": "Look up the order",
    "items that are strings, not dicts": ["Look up the order", "Find the policy"],
    "21 items": [{"content": f"step {i}", "status": "pending"} for i in range(21)],
    "blank content in the second item": [OK, {"content": "   ", "status": "pending"}],
    "content of tabs and line breaks only": [OK, {"content": "\t\n", "status": "pending"}],
    "content that is not a string": [OK, {"content": 42, "status": "pending"}],
    "an unknown status in the second item": [OK, {"content": "Reply", "status": "done"}],
    "a status in capitals": [OK, {"content": "Reply", "status": "Completed"}],
    "an empty status": [OK, {"content": "Reply", "status": ""}],
    "a status that is part of one": [OK, {"content": "Reply", "status": "progress"}],
    "two items in_progress": [OK, {"content": "Find the policy", "status": "in_progress"},
                              {"content": "Draft the reply", "status": "in_progress"}],
    "an unknown field": [OK, {"content": "Reply", "status": "pending", "priority": "high"}],
    "an item without a status": [OK, {"content": "Reply"}],
    "an item without content": [OK, {"status": "pending"}],
}
TWENTY = [{"content": f"step {i}", "status": "completed" if i < 5 else "pending"}
          for i in range(1, 21)]


def _short(plan: object) -> str:
    """A plan in a line: its size and its first two items."""
    if not isinstance(plan, list):
        return repr(plan)[:80]
    head = ", ".join(repr(item)[:60] for item in plan[:2])
    return f"{len(plan)} items: {head}{', ...' if len(plan) > 2 else ''}"


# Checked last: a tuple never comes from the model's JSON, so accepting one is a smaller
# slip than any rule above, and its message must not hide theirs.
NOT_A_LIST = ("a tuple, not a list", (OK,))


def _refuses(update_plan: Callable, label: str, items: object) -> None:
    """Raise AssertionError unless update_plan refuses ``items`` with the plan untouched."""
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
        raise AssertionError(f"{label}: the update was refused, but the plan changed (it "
                             f"held {_short(BASE)}; now {_short(plan)}). Check every "
                             "rule before you change anything.")


@check
def check_update_plan(update_plan: Callable) -> str:
    """Every refused update leaves the plan as it was; a valid one replaces it exactly."""
    for label, items in REFUSED.items():
        _refuses(update_plan, label, items)
    plan = copy.deepcopy(BASE)
    new = [{"content": "Find the policy", "status": "completed"},
           {"content": "Send the reply ", "status": "in_progress"}]
    try:
        returned = update_plan(plan, new)
    except ValueError as exc:
        raise AssertionError(f"a valid update was refused ({exc}): {_short(new)} breaks no "
                             "rule (content that is not blank may have spaces around it)"
                             ) from None
    if plan != new and [i.get("content") for i in plan if isinstance(i, dict)] == \
            [i["content"].strip() for i in new]:
        raise AssertionError("a valid update was stored with its content trimmed "
                             f"({plan[-1].get('content')!r} for {new[-1]['content']!r}): strip "
                             "only to test for blank content, and store the items as sent")
    if plan != new:
        raise AssertionError(f"a valid update should replace the plan in place: it holds "
                             f"{_short(plan)}")
    if returned is not plan:
        raise AssertionError("return the plan you were given (updated in place), not a new list")
    new[0]["status"] = "pending"
    new.append({"content": "Sneaked in", "status": "pending"})
    if plan[0]["status"] != "completed" or len(plan) != 2:
        raise AssertionError("changing the caller's list afterwards changed the plan: store "
                             "copies of the items (dict(item)) and a new list")
    try:
        cleared = update_plan(plan, [])
    except ValueError as exc:
        raise AssertionError(
            f"update_plan(plan, []) raised ValueError ({exc}), but [] is a valid update: it "
            "clears the plan (a model sends it when the plan is no longer needed). Refuse "
            "None, not an empty list: test `new_items is None`, not `not new_items`") from None
    if cleared != [] or plan != []:
        raise AssertionError("an empty list should clear the plan: after update_plan(plan, []) "
                             f"the plan is {_short(plan)} and the function returned "
                             f"{_short(cleared)}")
    try:
        update_plan(plan, copy.deepcopy(TWENTY))
    except ValueError as exc:
        raise AssertionError(f"a plan of exactly 20 items was refused ({exc}); the rule is at "
                             "most 20, so 20 is allowed: refuse len(new_items) > 20") from None
    if plan != TWENTY:
        raise AssertionError(f"a valid plan of 20 items should replace the plan; it holds "
                             f"{_short(plan)}")
    label, items = NOT_A_LIST
    try:
        _refuses(update_plan, label, items)
    except AssertionError as exc:
        raise AssertionError(f"{exc}. Every other rule holds; the last one says new_items is "
                             "a list (a JSON array arrives as one): test isinstance(new_items, "
                             "list)") from None
    return (f"{len(REFUSED) + 1} bad updates were refused with the plan untouched; "
            "valid ones replaced it.")


RECORD, POLICY, NOTE = "data/records/ORD-1003.json", "docs/policies/shipping.md", \
    "notes/ORD-1003.md"
WORK = [  # the work of each plan item, in order: (what it does, [(tool, path)])
    ("look up the order record", [("read_file", RECORD)]),
    ("read the shipping policy", [("read_file", POLICY)]),
    ("save the note", [("write_file", NOTE)]),
]
STATUSES = ["delayed", "held at customs", "out for delivery", "at the depot", "lost in transit"]
ITEMS = ["Lark sport earbuds", "Robin travel headphones", "Wren in-ear headphones",
         "Heron over-ear headphones", "Swift gaming headset"]


def _new_scenario(ws: Workspace) -> dict[str, str]:
    """Rewrite ORD-1003's record and the standard shipping time with values picked now."""
    rng = random.SystemRandom()
    low = rng.randint(4, 9)
    picked = {"status": rng.choice(STATUSES), "item": rng.choice(ITEMS),
              "days": f"{low}-{low + rng.randint(1, 5)} business days"}
    record = json.loads(ws.read_file(RECORD))
    record.update(status=picked["status"], item=picked["item"])
    ws.write_file(RECORD, json.dumps(record, indent=2) + "\n")
    ws.edit_file(POLICY, "3-5 business days", picked["days"])
    return picked


@check
def check_plan_steps(plan_steps: Callable[[], list]) -> str:
    """Your script plans 3 items, moves the plan with the work, and writes a note built
    from what the tools returned."""
    steps = plan_steps()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        picked = _new_scenario(ws)
        agent = Agent(ScriptedModel(steps), ws.tools, planning=True, max_turns=16)
        result = agent.run(SHIPPING_TASK)
        calls = [e for e in result.events if e.type == "tool_call" and e.depth == 0]
        if not calls or calls[0].tool_name != "todo_write":
            raise AssertionError("the first tool call should be todo_write: plan before you work")
        failed = [e for e in result.events if e.type == "tool_result" and not e.ok]
        if failed:
            raise AssertionError(f"the call to {failed[0].tool_name} was refused: "
                                 f"{failed[0].output}")
        first = calls[0].arguments.get("todos") or []
        if len(first) != 3:
            raise AssertionError(f"the first plan has {len(first)} items; plan three steps")
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
        check_plan_moved_with_the_work(result.events, WORK)
        note = ws.read_file(NOTE)
        for key, where in (("item", RECORD), ("status", RECORD), ("days", POLICY)):
            if picked[key] not in note:
                raise AssertionError(
                    f"the note does not say {picked[key]!r}, which {where} says in this run "
                    "(the check rewrote it with values of its own before the run). Build "
                    "the note from what read_file returned: make that step a function of "
                    f"the messages. Your note: {note[:200]!r}")
    return (f"each step ran while its item was in_progress, the note quotes the record and "
            f"the policy of this run, and the plan ended\n{render(result.plan)}")
