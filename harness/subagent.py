"""The sub-agent: hand a self-contained task to a fresh context, so that a long side quest
costs the parent one tool message (its tokens still count, per delegation).

    parent:    delegate_task({"task": "Summarise docs/policies/returns.md"})
                  v   a new conversation: [system (sub-agent prompt), user (the task)]
    sub-agent: its own turns, only `subagent_tools` (no delegate_task, no plan); the
               parent's model, hooks, permissions, clock and cancel
                  v
    parent:    role "tool" message = the sub-agent's final answer"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .mechanism import Mechanism
from .outcomes import INTERRUPTED
from .rounds import CURRENT
from .tools import Tool, ToolResult

SUBAGENT_SYSTEM = (
    "You are a sub-agent working on one task for another agent. You cannot see its "
    "conversation: everything you know is in the task. Use your tools if you have any, then "
    "reply with a short, self-contained answer that states what you found and where it came from.")
DELEGATE_DESCRIPTION = (
    "Hand a self-contained sub-task to a sub-agent with a fresh context: it sees only the "
    "task text, so include every detail it needs. Returns its final answer. Delegations in one "
    "reply run at once when the sub-agents only read, else one at a time, in order.")
NO_ANSWER = "(the sub-agent finished without an answer)"  # GeekAgent: 子 Agent 未返回结果


class DelegateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(description="The whole sub-task, with its context.")

    @field_validator("task")
    @classmethod
    def _not_blank(cls, task: str) -> str:  # refused before it runs: no sub-agent starts
        if not task.strip():
            raise ValueError("task is empty; describe the sub-task in full")
        return task


@dataclass
class Delegation:
    """What one delegation cost and produced (the panel draws these as a usage tree)."""

    child_id: str
    task: str
    outcome: str
    answer: str | None
    usage: dict
    tool_calls: int
    seconds: float
    error: str | None = None
    call_id: str | None = None  # the delegate_task call that started it
    paused: dict | None = None  # awaiting_approval: its messages, turns and pending calls

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Child:
    """What a sub-agent gets: its id, its task, a tool subset, its prompt and turns."""

    agent_id: str
    task: str
    tools: list[Tool]
    max_turns: int
    system: str = SUBAGENT_SYSTEM
    call_id: str | None = None
    started: float = field(default_factory=time.monotonic)

    def record(self, result: Any) -> Delegation:
        """The `Delegation` of this child, from the `RunResult` its run returned."""
        said = [m["content"] for m in result.messages
                if m["role"] == "assistant" and m.get("content")]
        answer = result.final or (said[-1] if said else None) or result.error
        calls = len({e.call_id for e in result.events if e.type == "tool_call"})  # once each
        seconds = round(time.monotonic() - self.started, 3)
        paused = dict(messages=result.messages, turns=result.turns, pending=result.pending) if (
            result.outcome == "awaiting_approval") else None
        return Delegation(self.agent_id, self.task, result.outcome, answer, dict(result.usage),
                          calls, seconds, result.error, self.call_id, paused)


class Subagents(Mechanism):
    """The `delegate_task` tool of one run, its children and their records. ``tools``: the
    names of the run's tools a sub-agent may use."""

    def __init__(self, tools: Iterable[str], max_turns: int, parent_id: str = "main", *,
                 system: str | None = None) -> None:
        self.child_tools = tuple(tools)
        self.max_turns = max_turns
        self.system = system or SUBAGENT_SYSTEM
        self.parent_id = parent_id
        self.delegations: list[Delegation] = []
        self.waiting: dict[str, Delegation] | None = None  # resumed: paused ones, by call id
        self.started = 0  # children so far (their ids), counted under the lock
        self.lock = threading.Lock()
        self.tool = Tool("delegate_task", DELEGATE_DESCRIPTION, DelegateArgs, self.delegate,
                         harness_tool=True, replan=True)

    def tools(self) -> list[Tool]:
        return [self.tool]

    def before_request(self, messages: list[dict]) -> list[dict]:
        """Whether this run's delegations may run at once (loop.py): when every tool a
        sub-agent gets may (it only reads), and the model takes requests in any order (a
        `ScriptedModel` plays its steps in the order asked: ``serial``)."""
        known = self.door.tools()
        self.tool.parallel = not getattr(self.door.model, "serial", False) and all(
            known[n].parallel and not known[n].side_effects for n in self.child_tools if n in known)
        return messages

    def results(self) -> dict:
        self.carried()
        return {"delegations": self.delegations}

    def carried(self) -> dict[str, Delegation]:
        """A resumed run (pause.py): the delegations made before the pause go on in this
        run's record; those whose sub-agent waits for a person, by their call's id."""
        with self.lock:
            if self.waiting is None:
                paused = self.door.asked.get("paused")
                before = list(paused.delegations) if paused else []
                self.waiting = {d.call_id: d for d in before if d.paused and d.call_id}
                self.delegations[:0] = [d for d in before if d.call_id not in self.waiting]
            return self.waiting

    def delegate(self, task: str) -> ToolResult:
        """Run one sub-agent to its end (or resume the one that waits); its answer is the
        tool's result (an empty one would read like a tool that printed nothing)."""
        known = self.door.tools()
        tools = [known[name] for name in self.child_tools if name in known]
        ticket, waiting = CURRENT.get(), self.carried()
        paused = waiting.pop(ticket.id, None) if ticket else None
        with self.lock:  # numbered in the model's order, though they may start at once
            self.started = number = ticket.n if ticket else self.started + 1
        name = paused.child_id if paused else f"{self.parent_id}.sub{number}"
        child = Child(name, task, tools, self.max_turns, self.system, ticket and ticket.id)
        done = self.door.run_child(child, paused)
        with self.lock:
            self.delegations.append(done)
            self.delegations.sort(key=lambda d: int(d.child_id.rsplit("sub", 1)[1]))
        if done.error == INTERRUPTED:  # recorded; now the interrupt goes on to the parent
            raise KeyboardInterrupt
        if done.paused:  # it waits for a person: the whole run pauses, and resumes into it
            self.door.hold(child.call_id, done.paused["pending"])
        if done.outcome == "completed":
            return ToolResult(True, done.answer or NO_ANSWER)
        stopped = f"[sub-agent stopped early: {done.outcome}]"
        return ToolResult(False, f"{stopped} {done.answer or '(no answer)'}")
