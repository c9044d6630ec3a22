"""Checks for lesson 06, the sub-agent. Each one runs the real harness on a scripted model.

The scripts here serve a parent and a sub-agent from one `ScriptedModel`, so every step
is one function that first asks who is calling: a request whose first message is the
sub-agent prompt comes from the sub-agent. `check_write_task` makes up its customers
(order ids, items) each time it runs, and asks about two different policies; each search
result holds passages of several files, the best one first.
"""

from __future__ import annotations

import copy
import json
import random
import re
import tempfile
from collections.abc import Callable

from course import check

from harness import Agent, RunResult, ScriptedModel, Workspace, say, tool_call
from harness.subagent import SUBAGENT_SYSTEM

PATH = re.compile(r"[\w./-]+\.md\b")
ORDER = re.compile(r"ORD-\d{4}")
IN_EAR = ("Wren in-ear headphones", "Finch wireless earbuds", "Lark sport earbuds")
OVER_EAR = ("Heron over-ear headphones", "Robin travel headphones", "Swift studio headphones")
CUSTOMERS = ("Ada Example", "Ben Sample", "Cleo Demo", "Dev Trial", "Eli Placeholder")


def _scenarios(ws: Workspace) -> list[dict]:
    """Three customers made up now, each with an order record in ``ws``: (question, the
    parent's search, the policy its first passage is in, the order, its item, the section
    that fits). Each search result holds passages of several files, the best one first."""
    rng = random.SystemRandom()
    ids = [f"ORD-{n}" for n in rng.sample(range(4000, 9999), 3)]
    found = [
        {"question": f"Order {ids[0]}: I opened them and they work fine, but I do not like "
                     "the fit. Can I return them?",
         "search": "can I return opened headphones that work fine or warranty", "results": 4,
         "policy": "docs/policies/returns.md", "order": ids[0], "item": rng.choice(IN_EAR),
         "section": "Hygiene rule for in-ear headphones"},
        {"question": f"Order {ids[1]}: a hinge broke after two months of normal use. "
                     "Is that covered?",
         "search": "broken hinge warranty covered returns", "results": 3,
         "policy": "docs/policies/warranty.md", "order": ids[1], "item": rng.choice(OVER_EAR),
         "section": "What the warranty covers"},
        {"question": f"Order {ids[2]}: the left earbud went silent after a month. Can I "
                     "return it?",
         "search": "dead driver defect return or warranty", "results": 3,
         "policy": "docs/policies/warranty.md", "order": ids[2], "item": rng.choice(IN_EAR),
         "section": "What the warranty covers"},
    ]
    for case in found:
        record = {"id": case["order"], "customer": rng.choice(CUSTOMERS), "item": case["item"],
                  "date": "2024-06-03", "status": "delivered"}
        ws.write_file(f"data/records/{case['order']}.json", json.dumps(record, indent=2))
    return found


def _is_subagent(messages: list[dict]) -> bool:
    return messages[0]["content"] == SUBAGENT_SYSTEM


def _sections(markdown: str) -> dict[str, str]:
    """``## Heading`` -> the first line of its text."""
    found = {}
    for block in markdown.split("\n## ")[1:]:
        heading, _, body = block.partition("\n")
        found[heading.strip()] = body.strip().splitlines()[0] if body.strip() else ""
    return found


def _fits(policy: dict[str, str], item: str) -> str:
    """The section of a policy that fits an item: the hygiene rule for in-ear ones."""
    if "Hygiene rule for in-ear headphones" in policy:
        in_ear = "in-ear" in item or "earbuds" in item
        return "Hygiene rule for in-ear headphones" if in_ear else "Opened headphones"
    return next(iter(policy))


def _scripted_subagent(messages: list[dict]) -> dict:
    """A sub-agent that knows only its task: it reads the file and the order the task names.

    1. read the first .md path named in the task (none: it says so and stops);
    2. read the record of the first order id in the task (none: it says so and stops);
    3. quote the section of the policy that fits the ordered item.
    """
    task = messages[1]["content"]
    done = [m["content"] for m in messages if m["role"] == "tool"]
    paths, orders = PATH.findall(task), ORDER.findall(task)
    if not paths:
        return say("I cannot tell which file to read: the task names no file.")
    if not done:
        return tool_call("read_file", path=paths[0], id="sub_1")
    if not orders:
        return say("I cannot tell which item the customer bought: the task names no order.")
    if len(done) == 1:
        return tool_call("read_file", path=f"data/records/{orders[0]}.json", id="sub_2")
    if done[1].startswith("Error"):
        return say(f"I could not read the order {orders[0]}: {done[1]}")
    policy, item = _sections(done[0]), json.loads(done[1])["item"]
    heading = _fits(policy, item)
    return say(f'{paths[0]}, "{heading}" applies to {item} ({orders[0]}): '
               f'"{policy.get(heading, "")}"')


def _scripted_parent(case: dict, write_task: Callable[[list[dict]], str], box: dict) -> Callable:
    def parent(messages: list[dict]) -> dict:
        turn = sum(m["role"] == "assistant" for m in messages)
        if turn == 0:
            return tool_call("search_docs", query=case["search"], max_results=case["results"],
                             id="call_1")
        if turn == 1:
            box["messages"] = copy.deepcopy(messages)
            try:
                box["task"] = write_task(copy.deepcopy(messages))
            except Exception as exc:  # re-raised by the check, outside the run
                box["error"] = exc
                return say("(write_task failed)")
            if not isinstance(box["task"], str):
                return say("(write_task returned no text)")
            return tool_call("delegate_task", task=box["task"], id="call_2")
        return say(messages[-1]["content"])

    return parent


def _one_script(parent: Callable[[list[dict]], dict]) -> Callable[[list[dict]], dict]:
    """One step for both agents: the sub-agent's script or the parent's, by the first message."""
    def step(messages: list[dict]) -> dict:
        return _scripted_subagent(messages) if _is_subagent(messages) else parent(messages)

    return step


def _carried_over(task: str, messages: list[dict]) -> str | None:
    """What of the parent's conversation the task carries as it is, if anything: the
    parent's system prompt, or every passage of the search result."""
    if messages[0]["content"].strip() in task:
        return "the parent's system prompt"
    found = messages[-1]["content"]
    passages = [line for line in found.splitlines()
                if line.strip() and not re.fullmatch(r"[\w./-]+\.md:\d+", line.strip())]
    if passages and all(line in task for line in passages):
        return "the whole search result, every passage of it"
    return None


def _judge_delegation(case: dict, task: object, result: RunResult, parent: list[dict]) -> None:
    assert isinstance(task, str) and task.strip(), (
        f"write_task must return the task as a non-empty string, not {task!r}")
    carried = _carried_over(task, parent)
    assert carried is None, (
        f"your task carries {carried} ({len(task)} characters). The sub-agent starts from "
        "a fresh context so that the parent's conversation stays out of it: write only "
        "what it needs to act, the customer's question and the path the search found. "
        "It reads the policy itself")
    assert result.delegations, f"no delegation happened (outcome {result.outcome})"
    reads = [e.arguments["path"] for e in result.events
             if e.type == "tool_call" and e.depth == 1 and e.tool_name == "read_file"]
    asked = f"for the question {case['question']!r}, "
    assert reads, (asked + "the sub-agent found no file path in your task, so it read "
                   "nothing. It cannot see the parent's search result: put the path in the "
                   "task.")
    heads = [line.strip().split(":")[0] for line in parent[-1]["content"].splitlines()
             if re.fullmatch(r"[\w./-]+:\d+", line.strip())] if parent else []
    later = reads[0] in heads[1:] and reads[0] != case["policy"]
    assert reads[0] == case["policy"], (
        asked + f"the sub-agent read {reads[0]!r}, but the search's best passage, the first "
        f"one, is in {case['policy']!r}: "
        + ("the result lists passages of several files, best first: take the path of the "
           "first passage (its first line), not a later one" if later else
           "take the path from the search result in messages, not from an earlier run"))
    record = f"data/records/{case['order']}.json"
    assert len(reads) == 2, (asked + "the sub-agent read the policy but not the order: it "
                             "cannot see the customer's question, so it does not know the "
                             "order id. Put the question in the task.")
    assert reads[1] == record, (
        asked + f"the sub-agent read {reads[1]!r}, but this customer's order is "
        f"{case['order']}: put this run's question in the task (messages[1]), not a fixed one")
    answer = result.delegations[0].answer or ""
    assert case["section"] in answer and case["item"] in answer, (
        f"the sub-agent answered: {answer}")


@check
def check_write_task(write_task: Callable[[list[dict]], str]) -> str:
    """Three customers made up now: for each, a parent searches, then delegates with your
    task text; judge what the sub-agent could do with it."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        for case in _scenarios(ws):
            box: dict = {}
            step = _one_script(_scripted_parent(case, write_task, box))
            agent = Agent(ScriptedModel([step] * 8), ws.tools, subagents=True,
                          subagent_tools=("read_file",))
            result = agent.run(case["question"])
            if "error" in box:
                raise box["error"]
            _judge_delegation(case, box.get("task"), result, box.get("messages") or [])
    return ("for three customers made up just now, the sub-agent read the policy the search "
            "found and the customer's order, from your task text alone, and quoted the "
            "section that fits the item.")


def _delegating_run(task: str) -> tuple[list[dict], list[dict]]:
    """Run a planning parent that delegates ``task``; return the parent's messages at the
    moment it delegated and the messages of the sub-agent's first request."""
    plan = [{"content": "Find the rule", "status": "in_progress"}]
    done = [{"content": "Find the rule", "status": "completed"}]
    model = ScriptedModel([
        tool_call("todo_write", todos=plan, id="p1"),
        tool_call("search_docs", query="warranty claim", max_results=1, id="p2"),
        tool_call("delegate_task", task=task, id="p3"),
        say("The warranty covers a broken hinge."),  # the sub-agent answers at once
        tool_call("todo_write", todos=done, id="p4"),
        say("It is a warranty claim."),
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
        assert isinstance(mine, list) and all(isinstance(m, dict) for m in mine), (
            f"return a list of message dicts, not {mine!r:.80}")
        system, user = sent
        if system not in mine:
            shown = str(mine[0].get("content"))[:60] if mine else "nothing"
            raise AssertionError(
                "the sub-agent's own system prompt is missing: its first message is "
                "{'role': 'system', 'content': SUBAGENT_SYSTEM} (harness.subagent); yours "
                f"starts with {mine[0].get('role') if mine else 'no message'} {shown!r}")
        assert mine[0] == system, (
            "the sub-agent's system prompt should be the first message, before the task")
        history = [m for m in mine if m in parent_messages and m not in sent]
        assert not history, (
            f"the sub-agent's first request has {len(sent)} messages; yours has {len(mine)}, "
            f"with the parent's {', '.join(str(m.get('role')) for m in history)}. None of the "
            "parent's history goes to the sub-agent: only its own system prompt and the task")
        assert user in mine, (
            f"the task is missing: the second message is {{'role': 'user', 'content': task}}, "
            f"the task text exactly; yours are {mine!r:.200}")
        assert mine == sent, (f"send exactly two messages, the system prompt and then the task; "
                              f"yours are {mine!r:.200}")
    return "your messages match the sub-agent's real first request, for two different tasks."
