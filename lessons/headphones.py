"""Lesson 07's run, as a module: lesson 08 reads it, and does not repeat its cells.

The same task, script, approver and settings as lesson 07's cells, step for step: the model
is scripted, the tools really run on a fresh copy of the sample shop, and every answer
quotes what the tools returned. `run()` plays it once and returns what lesson 08 reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import harness
from harness import Agent, Permissions, RunResult, ScriptedModel, tool_call

TASK = ("A customer asks whether they can return opened in-ear headphones after 10 days "
        "and how long the refund takes. Answer with sources.")
STEPS = ["Find the return rule for opened in-ear headphones",
         "Find how long a refund takes (sub-agent)",
         "Save a draft reply in notes/reply.md"]
SETTINGS: dict[str, Any] = {"planning": True, "max_turns": 20, "reminder_after": 2,
                            "subagents": True, "subagent_tools": ("read_file", "search_docs")}


def plan(steps: list[str], *statuses: str) -> dict:
    """A todo_write call with the whole list: each step with its status."""
    return tool_call("todo_write", todos=[{"content": c, "status": s}
                                          for c, s in zip(steps, statuses, strict=True)])


def outputs(messages: list[dict], name: str) -> list[str]:
    """What the tool `name` returned so far, in order."""
    ids = {c["id"] for m in messages if m["role"] == "assistant"
           for c in m.get("tool_calls") or () if c["function"]["name"] == name}
    return [m["content"] for m in messages if m["role"] == "tool" and m["tool_call_id"] in ids]


def quote(search_output: str, word: str) -> str:
    """The first sentence with `word` in a search_docs result, quoted, with its path:line."""
    for passage in search_output.split("\n\n"):
        source, *lines = passage.splitlines()
        text = " ".join(line for line in lines if not line.startswith("#"))
        for sentence in re.split(r"(?<=\.) ", text):
            if word in sentence:
                return f'"{sentence}" ({source})'
    raise LookupError(f"no passage mentions {word!r}")


def _answer_text(messages: list[dict]) -> str:
    found = outputs(messages, "search_docs")[0]
    rule = quote(found, "14 days")
    days = int(re.search(r"within (\d+) days", rule).group(1))
    inside = "within" if 10 <= days else "past"
    return (f"Only if they are defective.\n"
            f"- {quote(found, 'hygiene')}\n"
            f"- Defective ones follow this rule: {rule}. Day 10 is {inside} that limit.\n"
            f"- Refunds, as a sub-agent found: {outputs(messages, 'delegate_task')[0]}")


def script() -> list:
    """Lesson 07's ten steps: the main agent's and, in the middle, its sub-agent's."""
    return [
        plan(STEPS, "in_progress", "pending", "pending"),                   # main
        tool_call("search_docs", query="return opened in-ear headphones", max_results=2),
        tool_call("delegate_task", task="How long does a Larkspur Audio refund take? Search "
                                        "the policies and quote the sentence with its path:line."),
        tool_call("search_docs", query="refund business days", max_results=1),  # sub-agent
        lambda m: {"content": quote(outputs(m, "search_docs")[0], "refund")},   # sub-agent
        plan(STEPS, "completed", "completed", "in_progress"),               # main (forced)
        lambda m: {"content": _answer_text(m)},                             # pushed back
        lambda m: tool_call("write_file", path="notes/reply.md", content=(
            f"Hello,\n\n{_answer_text(m)}\n\nLarkspur Audio support\n")),
        plan(STEPS, "completed", "completed", "completed"),
        lambda m: {"content": _answer_text(m) + "\nA draft reply is in notes/reply.md."},
    ]


def approve(tool_name: str, arguments: dict) -> bool:
    """Lesson 07's scripted approver: writes under notes/ only (silent here)."""
    return arguments["path"].startswith("notes/")


PERMISSIONS = Permissions({"read_file": "allow", "list_files": "allow", "search_docs": "allow",
                           "write_file": "ask", "edit_file": "ask", "run_shell": "deny"},
                          approve=approve)


@dataclass
class Played:
    """One play of the run: what it returned, the model that answered, the workspace."""

    result: RunResult
    model: ScriptedModel
    workspace: harness.Workspace


def run(observers: Iterable[Any] = ()) -> Played:
    """Play lesson 07's run once, on a fresh copy of the sample shop."""
    ws = harness.Workspace.sample()
    model = ScriptedModel(script())
    agent = Agent(model, ws.tools, permissions=PERMISSIONS, observers=list(observers),
                  **SETTINGS)
    return Played(agent.run(TASK, plan_first=True), model, ws)
