"""The plan: a `todo_write` tool that replaces the whole to-do list at once.

    todo_write({"todos": [{"content": "Find the return policy", "status": "in_progress"},
                          {"content": "Draft the answer",       "status": "pending"}]})
    -> [>] Find the return policy
       [ ] Draft the answer

Validate, then replace: a refused update leaves the old plan as it was."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .tool_text import describe
from .tools import Tool, ToolArgumentError, ToolResult

UPDATED = "Plan updated"  # how an accepted update's result starts (planning.plan_in reads it)
MAX_ITEMS = 20
MAX_CONTENT = 500  # characters: a step of a plan, not a document (the stop gate quotes it)
# A control character or line break would draw a fake "[x] ..." line; a bidi control reorders it.
NOT_IN_CONTENT = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029"
                            r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MARKERS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoItem(BaseModel):
    # One step of the plan. (A docstring would go to the model in every request's schema:
    # todo_write's description says it all; benchmarks/prompt_budget.py counts it.)

    model_config = ConfigDict(extra="forbid", frozen=True)
    content: str
    status: Literal["pending", "in_progress", "completed"]

    @field_validator("content")
    @classmethod
    def _one_short_line(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be blank")
        if len(value) > MAX_CONTENT:
            raise ValueError(f"content is {len(value):,} characters; at most {MAX_CONTENT} "
                             "(one step, in a sentence)")
        if NOT_IN_CONTENT.search(value):
            raise ValueError("content must be one line, without control characters "
                             "(no newlines or tabs)")
        return value


class TodoWriteArgs(BaseModel):
    # The arguments of `todo_write`: the complete, updated list (no docstring: see TodoItem).

    model_config = ConfigDict(extra="forbid")
    todos: list[TodoItem]


class PlanError(ValueError):
    """A plan update broke a rule; the old plan is unchanged."""


def render(items: Iterable[TodoItem]) -> str:
    """The one formatter for the plan: tool results, the terminal and the panel use it."""
    lines = [f"{MARKERS[item.status]} {item.content}" for item in items]
    return "\n".join(lines) if lines else "(the plan is empty)"


def progress(items: list[TodoItem]) -> str:
    return f"{sum(item.status == 'completed' for item in items)}/{len(items)} done"


def diff(old: list[TodoItem], new: list[TodoItem]) -> dict[str, list]:
    """What an update changed: items added, items removed, and status changes."""
    before = {item.content: item.status for item in old}
    after = {item.content: item.status for item in new}
    return {"added": [c for c in after if c not in before],
            "removed": [c for c in before if c not in after],
            "status_changes": [[c, before[c], s] for c, s in after.items()
                               if c in before and before[c] != s]}


class TodoList:
    """The current plan of one run (watch it through ``plan_update`` events)."""

    def __init__(self, max_items: int = MAX_ITEMS) -> None:
        self.max_items = max_items
        self._items: list[TodoItem] = []

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"TodoList({progress(self._items)})\n{render(self._items)}"

    def snapshot(self) -> list[TodoItem]:
        return [item.model_copy() for item in self._items]

    def render(self) -> str:
        return render(self._items)

    def update(self, items: Iterable[TodoItem | dict]) -> str:
        """Validate the whole new list, then replace the plan (or raise `PlanError`)."""
        try:  # the tool's own arguments model: the same errors, naming each item
            new = TodoWriteArgs.model_validate({"todos": items}).todos
        except ValidationError as exc:
            raise PlanError(describe(exc).replace("invalid arguments", "invalid plan")) from None
        if len(new) > self.max_items:
            raise PlanError(f"a plan holds at most {self.max_items} items, got {len(new)}")
        active = sum(item.status == "in_progress" for item in new)
        if active > 1:
            raise PlanError(f"at most one item may be in_progress, got {active}")
        self._items = new
        return self.render()

    def as_tool(self) -> Tool:
        """The `todo_write` tool bound to this plan."""
        return _TodoWrite("todo_write", TODO_WRITE_DESCRIPTION.format(max_items=self.max_items),
                          TodoWriteArgs, self._write, harness_tool=True)

    def _write(self, todos: list[TodoItem]) -> ToolResult:
        try:
            plan = self.update(todos)
        except PlanError as exc:
            return ToolResult(False, f"Error: {exc}. The plan was not changed.")
        return ToolResult(True, f"{UPDATED} ({progress(self._items)}):\n{plan}")


class _TodoWrite(Tool):
    """Every refusal, even of malformed arguments, says the plan is unchanged."""

    def parse(self, arguments: str) -> BaseModel:
        try:
            return super().parse(arguments)
        except ToolArgumentError as exc:
            raise ToolArgumentError(f"{exc}. The plan was not changed.") from None


TODO_WRITE_DESCRIPTION = (
    "Replace the whole plan for this task. Send every item each time (items you leave out are "
    "dropped). Each item: what to do (content) and its status. At most {max_items} items and "
    "one in_progress; [] clears the plan.")
PLANNING_PROMPT = (
    "Planning: for a task of several steps, first call todo_write with a short plan "
    "(one item in_progress), keep it current as you work (mark an item completed as soon as "
    "it is done) and finish every item before your final answer. For a simple one-step "
    "question, answer directly without a plan.")
