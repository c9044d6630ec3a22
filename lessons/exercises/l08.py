"""Checks for lesson 08, execution control. Each one runs the real harness on a scripted model."""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import check

from harness import Agent, ScriptedModel, Tool, Workspace, tool

GOOD_IDS = ("ORD-1001", "ORD-1003")
BAD_IDS = (
    "ORD-1001; rm -rf /",      # a second command
    "$(whoami)",               # command substitution
    "`id`",                    # backticks
    "ORD-1001\nORD-1002",      # a newline
    "-h",                      # an option
    "ORD-1001 --verbose",      # a smuggled flag after a space
    "../records/ORD-1001",     # a path
    "ORD-10011",               # one digit too many
)


def _step(*calls: tuple[str, str, dict]) -> dict:
    return {"content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for call_id, name, args in calls]}


@check
def check_strict_query_tool(make_query_tool: Callable[[Path], Tool]) -> str:
    """Give your tool valid ids and injection attempts through a real run."""
    values = GOOD_IDS + BAD_IDS
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        query = make_query_tool(ws.root)
        assert isinstance(query, Tool), f"return a CommandTool, not {type(query).__name__}"
        assert query.name == "query_record", f"name the tool 'query_record', not {query.name!r}"
        params = sorted(query.schema()["function"]["parameters"]["properties"])
        assert params == ["record_id"], f"the model should fill only record_id, not {params}"
        model = ScriptedModel([
            _step(*((f"call_{i}", "query_record", {"record_id": v}) for i, v in enumerate(values))),
            {"content": "Done."},
        ])
        result = Agent(model, [query]).run("Look up these orders.")
    results = {e.call_id: e for e in result.events if e.type == "tool_result"}
    for i, value in enumerate(GOOD_IDS):
        event = results[f"call_{i}"]
        assert event.ok and f'"id": "{value}"' in event.output, (
            f"{value} should print its record, but got: {event.output[:200]}")
    for i, value in enumerate(BAD_IDS, start=len(GOOD_IDS)):
        event = results[f"call_{i}"]
        assert event.status == "invalid_arguments", (
            f"{value!r} got past your pattern and was stopped only later ({event.status}: "
            f"{event.output.splitlines()[-1][:120]!r}). Refuse it before anything runs, with "
            "a pattern that accepts only ORD- and four digits.")
    return (f"{len(GOOD_IDS)} valid ids printed their records; all {len(BAD_IDS)} injection "
            "attempts were refused before any process started.")


def _cancel_run(make_observer: Callable[[int, threading.Event], Any], n: int) -> tuple:
    """A run of five calls (three in one reply, then two) with your observer set to ``n``."""
    ran: list[str] = []

    @tool
    def pack(order_id: str) -> str:
        """Pack an order for shipping."""
        ran.append(order_id)
        return f"packed {order_id}"

    orders = ["ORD-1001", "ORD-1002", "ORD-1003", "ORD-1004", "ORD-1005"]
    calls = [(f"call_{i}", "pack", {"order_id": o}) for i, o in enumerate(orders)]
    model = ScriptedModel([_step(*calls[:3]), _step(*calls[3:]), {"content": "All packed."}])
    cancel = threading.Event()
    observer = make_observer(n, cancel)
    result = Agent(model, [pack], observers=[observer]).run("Pack every order.", cancel=cancel)
    return result, ran


@check
def check_cancel_after(make_observer: Callable[[int, threading.Event], Any]) -> str:
    """Run five calls with your observer at n=2 and n=4; judge the outcome and transcript."""
    for n in (2, 4):
        result, ran = _cancel_run(make_observer, n)
        assert result.outcome == "cancelled", (
            f"with n={n} the run ended {result.outcome!r}, not 'cancelled': set the event "
            "when the n-th tool call has finished")
        assert len(ran) == n, (f"with n={n}, {len(ran)} calls ran ({', '.join(ran)}): set the "
                               "event as the n-th result arrives (count tool_result events)")
        asked = [c["id"] for m in result.messages if m["role"] == "assistant"
                 for c in m.get("tool_calls") or ()]
        answered = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
        assert sorted(asked) == sorted(answered), "some tool call has no tool message"
        skipped = [m for m in result.messages if m["role"] == "tool"
                   and m["content"].startswith("Not run")]
        assert len(skipped) == len(asked) - n, "every call after the n-th should be 'Not run'"
    return ("the run stopped after exactly n calls, and every call the model asked for has "
            "its tool message.")
