"""Did the plan move with the work? Shared by the checks of lessons 04 and 07.

A script keeps its plan current when, at the moment each item's work call is made, that
item is ``in_progress`` and every item before it is ``completed``. These helpers read
that from a run's events: the ``plan_update`` events (accepted ``todo_write`` calls) and
the main agent's ``tool_call`` events.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.events import Event

# One plan item's work: what it does, and the calls that do it, as (tool name, path);
# a path of None means any arguments.
Work = tuple[str, Sequence[tuple[str, str | None]]]


def _does(event: Event, calls: Sequence[tuple[str, str | None]]) -> bool:
    path = event.arguments.get("path") if isinstance(event.arguments, dict) else None
    return any(event.tool_name == name and want in (None, path) for name, want in calls)


def _shown(plan: list[dict]) -> str:
    return ", ".join(f"{t['content']!r} {t['status']}" for t in plan) or "no plan yet"


def _call_text(event: Event) -> str:
    path = event.arguments.get("path") if isinstance(event.arguments, dict) else None
    return f"{event.tool_name} {path}" if path else event.tool_name


def plan_at_work(events: list[Event], work: Sequence[Work]) -> list[tuple[Event | None,
                                                                           list[dict]]]:
    """For each item's work: its first tool_call event in the main agent (None if it was
    never made), and the plan as the last accepted todo_write left it at that moment."""
    found: list[tuple[Event | None, list[dict]]] = [(None, [])] * len(work)
    plan: list[dict] = []
    for event in events:
        if event.depth:
            continue
        if event.type == "plan_update":
            plan = event.todos
        elif event.type == "tool_call":
            for i, (_, calls) in enumerate(work):
                if found[i][0] is None and _does(event, calls):
                    found[i] = (event, plan)
    return found


def check_plan_moved_with_the_work(events: list[Event], work: Sequence[Work]) -> None:
    """Raise AssertionError, with the fix, unless each item was in_progress during its work,
    with every earlier item completed, and the work came in the plan's order."""
    found = plan_at_work(events, work)
    for i, (event, _) in enumerate(found):
        if event is None:
            name, path = work[i][1][0]
            raise AssertionError(f"your script never called {name}"
                                 f"{f' with path {path!r}' if path else ''} (to {work[i][0]})")
    order = sorted(range(len(work)), key=lambda i: events.index(found[i][0]))
    if order != list(range(len(work))):
        done = ", then ".join(work[i][0] for i in order)
        raise AssertionError(f"your script's work came in another order ({done}); the "
                             "plan's items are in the task's order, so do the work in that "
                             "order too, one item after the other")
    for i, (event, plan) in enumerate(found):
        what, call = work[i][0], _call_text(event)
        if len(plan) != len(work):
            raise AssertionError(
                f"when you called {call} (to {what}), the plan had {len(plan)} items "
                f"({_shown(plan)}); keep the same {len(work)} items, in the task's order, "
                "and change only their status")
        busy = [k for k, t in enumerate(plan) if t["status"] == "in_progress"]
        if not busy:
            raise AssertionError(
                f"when you called {call} (to {what}), no item was in_progress; the plan "
                f"was: {_shown(plan)}. Update the plan as you go: mark item {i + 1} "
                "in_progress with todo_write just before you do its work")
        if busy[0] < i:
            raise AssertionError(
                f"when you called {call} (to {what}, the work of item {i + 1}), item "
                f"{busy[0] + 1} was still in_progress; the plan was: {_shown(plan)}. The "
                f"plan fell behind the work: before this call, mark item {busy[0] + 1} "
                f"completed and item {i + 1} in_progress with todo_write")
        if busy[0] > i:
            raise AssertionError(
                f"when you called {call} (to {what}, the work of item {i + 1}), item "
                f"{busy[0] + 1} was the one in_progress; the plan was: {_shown(plan)}. "
                "List the items in the order of the work, and mark each one in_progress "
                "just before its own work, not earlier")
        if any(t["status"] != "completed" for t in plan[:i]):
            raise AssertionError(
                f"when you called {call} (to {what}), an earlier item was not completed; "
                f"the plan was: {_shown(plan)}. Mark each item completed when its work is "
                "done, before the next one starts")
