"""Checks for lesson 06, the sub-agent. Each one runs the real harness on a scripted model.

The scripts here serve a parent and a sub-agent from one `ScriptedModel`, so every step
is one function that first asks who is calling: a request whose first message is the
sub-agent prompt comes from the sub-agent.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from collections.abc import Callable

from course import check

from harness import Agent, ScriptedModel, Workspace
from harness.subagent import SUBAGENT_SYSTEM

QUESTION = ("Order ORD-1002: I opened my new headphones and they work fine, but I do not "
            "like the fit. Can I return them?")
SEARCH = "return opened headphones that work"
POLICY = "docs/policies/returns.md"
PATH = re.compile(r"[\w./-]+\.md\b")
ORDER = re.compile(r"ORD-\d{4}")


def _call(call_id: str, name: str, **args: object) -> dict:
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {
        "name": name, "arguments": json.dumps(args)}}]}


def _is_subagent(messages: list[dict]) -> bool:
    return messages[0]["content"] == SUBAGENT_SYSTEM


def _sections(markdown: str) -> dict[str, str]:
    """``## Heading`` -> the first line of its text."""
    found = {}
    for block in markdown.split("\n## ")[1:]:
        heading, _, body = block.partition("\n")
        found[heading.strip()] = body.strip().splitlines()[0] if body.strip() else ""
    return found


def _scripted_subagent(messages: list[dict]) -> dict:
    """A sub-agent that knows only its task: it reads the file and the order the task names.

    1. read the policy file named in the task (no path: it says so and stops);
    2. read the order record named in the task (no order id: it guesses the general rule);
    3. quote the section that fits the item: the hygiene rule for in-ear headphones.
    """
    task = messages[1]["content"]
    done = [m for m in messages if m["role"] == "tool"]
    call_id = f"sub_{len(done) + 1}"
    paths, orders = PATH.findall(task), ORDER.findall(task)
    if not done:
        if not paths:
            return {"content": "I cannot tell which file to read: the task names no file."}
        return _call(call_id, "read_file", path=paths[0])
    if len(done) == 1 and orders and not done[0]["content"].startswith("Error"):
        return _call(call_id, "read_file", path=f"data/records/{orders[0]}.json")
    policy = _sections(done[0]["content"])
    if orders:
        item = json.loads(done[1]["content"])["item"]
        heading = next((h for h in policy if "in-ear" in h), "") if "in-ear" in item else ""
        heading = heading or "Opened headphones"
        source = f"{item} ({orders[0]})"
    else:
        heading, source = "Opened headphones", "an unknown order"
    return {"content": f'{paths[0]}, "{heading}" applies to {source}: "{policy.get(heading, "")}"'}


def _scripted_parent(write_task: Callable[[list[dict]], str], box: dict) -> Callable:
    def parent(messages: list[dict]) -> dict:
        turn = sum(m["role"] == "assistant" for m in messages)
        if turn == 0:
            return _call("call_1", "search_docs", query=SEARCH, max_results=2)
        if turn == 1:
            try:
                box["task"] = write_task(copy.deepcopy(messages))
            except Exception as exc:  # re-raised by the check, outside the run
                box["error"] = exc
                return {"content": "(write_task failed)"}
            if not isinstance(box["task"], str):
                return {"content": "(write_task returned no text)"}
            return _call("call_2", "delegate_task", task=box["task"])
        return {"content": messages[-1]["content"]}

    return parent


@check
def check_write_task(write_task: Callable[[list[dict]], str]) -> str:
    """Run a parent that searches, then delegates with your task text; judge what the
    sub-agent could do with it."""
    box: dict = {}
    parent = _scripted_parent(write_task, box)

    def step(messages: list[dict]) -> dict:
        return _scripted_subagent(messages) if _is_subagent(messages) else parent(messages)

    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        agent = Agent(ScriptedModel([step] * 8), ws.tools, subagents=True,
                      subagent_tools=("read_file",))
        result = agent.run(QUESTION)
    if "error" in box:
        raise box["error"]
    task = box.get("task")
    assert isinstance(task, str) and task.strip(), (
        f"write_task must return the task as a non-empty string, not {task!r}")
    assert result.delegations, f"no delegation happened (outcome {result.outcome})"
    reads = [e.arguments["path"] for e in result.events
             if e.type == "tool_call" and e.depth == 1 and e.tool_name == "read_file"]
    assert reads, ("the sub-agent found no file path in your task, so it read nothing. It "
                   "cannot see the parent's search result: put the path in the task.")
    assert reads[0] == POLICY, (f"the sub-agent read {reads[0]!r}, but the parent's search "
                                f"found {POLICY!r}")
    assert len(reads) == 2, ("the sub-agent read the policy but not the order: it cannot see "
                             "the customer's question, so it does not know the order id. "
                             "Put the question in the task.")
    answer = result.delegations[0].answer or ""
    assert "Hygiene rule" in answer, f"the sub-agent answered: {answer}"
    return ("from your task text alone the sub-agent read returns.md and the order, and "
            "quoted the hygiene rule for in-ear headphones.")


def _delegating_run(task: str) -> tuple[list[dict], list[dict]]:
    """Run a planning parent that delegates ``task``; return the parent's messages at the
    moment it delegated and the messages of the sub-agent's first request."""
    plan = {"todos": [{"content": "Find the rule", "status": "in_progress"}]}
    done = {"todos": [{"content": "Find the rule", "status": "completed"}]}
    model = ScriptedModel([
        _call("p1", "todo_write", **plan),
        _call("p2", "search_docs", query="warranty claim", max_results=1),
        _call("p3", "delegate_task", task=task),
        {"content": "The warranty covers a broken hinge."},  # the sub-agent answers at once
        _call("p4", "todo_write", **done),
        {"content": "It is a warranty claim."},
    ])
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        Agent(model, ws.tools, planning=True, subagents=True).run(
            "A hinge broke on ORD-1001. Return or warranty?")
    k = next(i for i, r in enumerate(model.requests) if _is_subagent(r["messages"]))
    before, after = model.requests[k - 1]["messages"], model.requests[k + 1]["messages"]
    parent_messages = after[:len(before) + 1]  # up to the assistant's delegate_task call
    return parent_messages, model.requests[k]["messages"]


@check
def check_build_subagent_request(build_subagent_request: Callable[[list[dict], str], list]) -> str:
    """Compare your messages with the sub-agent request the harness really sent."""
    for task in ("Read docs/policies/warranty.md and say whether it covers a broken hinge.",
                 "Quote the refund rule in docs/policies/returns.md."):
        parent_messages, sent = _delegating_run(task)
        mine = build_subagent_request(copy.deepcopy(parent_messages), task)
        assert isinstance(mine, list), f"return a list of message dicts, not {type(mine).__name__}"
        assert len(mine) == len(sent), (
            f"the sub-agent's first request has {len(sent)} messages; yours has {len(mine)}. "
            "None of the parent's history goes to the sub-agent.")
        shown = str(mine[0].get("content"))[:60] if isinstance(mine[0], dict) else mine[0]
        assert mine[0] == sent[0], ("the first message differs: the sub-agent gets its own "
                                    "system prompt (harness.subagent.SUBAGENT_SYSTEM), yours "
                                    f"starts {shown!r}")
        assert mine[1] == sent[1], (f"the second message should be the task as a user message; "
                                    f"yours is {mine[1]!r}")
    return "your messages match the sub-agent's real first request, for two different tasks."
