"""Planning in a run (lessons 04, 05, 07): a `TodoList` and its `todo_write` tool at the
loop's fixed points. It forces `todo_write` for one request (after ``plan_first``, a task that
asks for steps, a sub-agent's news), reports each accepted update, reminds, and gates the stop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .calls import Call
from .mechanism import Answer, Mechanism, Note
from .outcomes import RunOver
from .reminder import Reminder, asks_for_steps, forced, stop_gate_text
from .todo import PLANNING_PROMPT, UPDATED, TodoItem, TodoList, TodoWriteArgs, diff
from .tools import Tool


class Planning(Mechanism):
    """The plan of one run, its `todo_write` tool, the reminder, forcing and the stop gate."""

    def __init__(self, reminder_after: int = 3, counting: str = "success", *,
                 plan_first: bool = False, plan: list | None = None,
                 from_words: bool = False) -> None:
        self.plan = TodoList()
        self.plan.update(plan or [])  # carried over from an earlier run, only if asked
        self.tool = self.plan.as_tool()
        self.reminder = Reminder(reminder_after, counting)
        self.force_next = plan_first
        self.from_words = from_words
        self.pushbacks = 0
        self._shown = self.plan.snapshot()  # the plan as the last plan_update showed it

    def prompt(self) -> str:
        return PLANNING_PROMPT

    def tools(self) -> list[Tool]:
        return [self.tool]

    def before_request(self, messages: list[dict]) -> list[dict]:
        """Before the first request only: does the task (the last message) ask for steps?"""
        if self.from_words:
            self.from_words = False
            self.force_next |= asks_for_steps(str(messages[-1].get("content") or ""))
        return messages

    def tool_choice(self) -> Any:
        """Forcing lasts exactly one request, whatever the model does with it."""
        force, self.force_next = self.force_next, False
        return forced("todo_write") if force else None

    def after_call(self, call: Call) -> Iterator[Note]:
        if call.tool is self.tool and call.ok:
            if call.status == "recorded":  # a resumed run: the plan is rebuilt, not lost
                self.plan.update(call.args.todos)
            plan = self.plan.snapshot()
            changes, self._shown = diff(self._shown, plan), plan
            yield Note("plan_update", {"todos": [i.model_dump() for i in plan], **changes})

    def after_round(self, calls: list[Call]) -> Iterator[Note]:
        self.force_next |= any(call.ran and call.tool.replan for call in calls)  # a delegation ran
        updated = any(call.tool is self.tool and call.ok for call in calls)
        if text := self.reminder.after_round([call.name for call in calls], updated):
            yield Note("reminder", {"text": text, "rounds": self.reminder.after}, message=text)

    def on_answer(self, answer: Answer) -> Iterator[Note]:
        """The stop gate: an answer while the plan has open items is pushed back once."""
        open_items = self.open_items()
        if not open_items:
            return
        if self.pushbacks >= 1 or answer.last_turn:  # no second push back, none unanswered
            raise RunOver("open_items", final=answer.text)
        self.pushbacks += 1
        yield Note("stop_gate", {"open_items": open_items}, message=stop_gate_text(open_items))

    def open_items(self) -> list[str]:
        return [item.content for item in self.plan.snapshot() if item.status != "completed"]

    def facts(self) -> dict[str, Any]:
        return {"open_items": self.open_items(), "pushbacks": self.pushbacks}

    def results(self) -> dict[str, Any]:
        return {"plan": self.plan.snapshot()}

    def pinned(self) -> str | None:
        """The plan is state outside the messages: compaction sends it with every request."""
        if not len(self.plan):
            return None
        return f"<plan>Your current plan (todo_write):\n{self.plan.render()}</plan>"


def plan_in(messages: list[dict]) -> list[TodoItem]:
    """The plan a conversation holds: the items of its last accepted `todo_write`."""
    plan: list[TodoItem] = []
    asked: dict[str, str] = {}  # the todo_write calls of the last assistant message
    for message in messages:
        if message["role"] == "assistant":
            asked = {call["id"]: call["function"]["arguments"]
                     for call in message.get("tool_calls") or ()
                     if call["function"]["name"] == "todo_write"}
        elif message["role"] == "tool" and message["tool_call_id"] in asked:
            if str(message.get("content")).startswith(UPDATED):  # accepted, not refused
                plan = TodoWriteArgs.model_validate_json(asked[message["tool_call_id"]]).todos
    return plan
