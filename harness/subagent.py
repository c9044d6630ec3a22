"""The sub-agent: hand a self-contained task to a fresh context.

    parent: ... delegate_task({"task": "Summarise docs/policies/returns.md"})
                   |
                   v   a new conversation: [system (sub-agent prompt), user (the task)]
            sub-agent: its own turns, only the tools in `subagent_tools`,
                       no delegate_task (no recursion), no parent plan,
                       the parent's hooks, permissions, clock and cancel
                   |
                   v
    parent: role "tool" message = the sub-agent's final answer

The parent's history never reaches the child, and the child's history never comes
back: only its answer does. That is the point: a long side quest costs the parent one
tool message. Its tokens still count, in the run's totals and per delegation.

This module does not import the loop: the loop hands it a function that runs a child.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .tools import Tool, ToolResult

SUBAGENT_SYSTEM = (
    "You are a sub-agent working on one task for another agent. You cannot see its "
    "conversation: everything you know is in the task. Use your tools if you have any, "
    "then reply with a short, self-contained answer that states what you found and "
    "where it came from."
)

DELEGATE_DESCRIPTION = (
    "Hand a self-contained sub-task to a sub-agent with a fresh, empty context. It sees "
    "only the task text (not this conversation), so include every detail it needs. "
    "Returns the sub-agent's final answer."
)


class DelegateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str = Field(description="The complete sub-task, with all context the sub-agent needs.")


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

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def delegate_tool(run_child: Callable[[str], Delegation]) -> Tool:
    """The `delegate_task` tool; ``run_child(task)`` runs one sub-agent to its end."""

    def delegate_task(task: str) -> ToolResult:
        if not task.strip():
            return ToolResult(False, "Error: task is empty; describe the sub-task in full.")
        done = run_child(task)
        if done.outcome == "completed":
            return ToolResult(True, done.answer or "")
        partial = done.answer or "(no answer)"
        return ToolResult(False, f"[sub-agent stopped early: {done.outcome}] {partial}")

    return Tool("delegate_task", DELEGATE_DESCRIPTION, DelegateArgs, delegate_task)
