"""How long a round of calls takes when its calls may run at once, next to one call alone,
measured in the same run (issue 29).

Three rounds, each against its floor, the best of a few tries each::

    four reads       four side-effect-free calls of 300 ms each  vs  one such call alone
    three delegations three sub-agents whose model waits 300 ms   vs  one delegation alone
    a write and three reads   a 300 ms call with side effects, then three 300 ms reads
                              vs  the write alone plus one read alone; the write must not
                              overlap any read (checked, not timed)

The model is scripted (no network): the parent's replies make the calls; each sub-agent's
request waits 300 ms before it answers, as a live model would. Targets: each round at most
1.25 times its floor (today, calls one after another, the four reads took about 4 times).
Exits 0 either way and prints PASS or FAIL::

    python benchmarks/parallel_rounds.py
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from harness import Agent, ScriptedModel, parallel, say, tool, tool_call
from harness.models import ModelReply

PAUSE = 0.3  # seconds each call (or sub-agent's request) takes
TRIES = 3
TARGET = 1.25
active, overlaps, lock = [0], [0], threading.Lock()


def busy(name: str) -> None:
    """Take PAUSE seconds, counting how many calls run meanwhile."""
    with lock:
        active[0] += 1
    time.sleep(PAUSE)
    with lock:
        active[0] -= 1


@tool(parallel=True)
def search(query: str) -> str:
    """Search the docs (a read: safe beside other calls)."""
    busy("search")
    return f"passages for {query}"


@tool(side_effects=True)
def pay(order: str) -> str:
    """Pay an order (it changes the world: always alone)."""
    with lock:
        if active[0]:
            overlaps[0] += 1
    busy("pay")
    with lock:
        if active[0]:
            overlaps[0] += 1
    return f"paid {order}"


class Delegating:
    """A model that takes requests in any order: the parent delegates ``n`` tasks in one
    reply, then answers; each sub-agent's request waits PAUSE, then answers."""

    model = "delegating"

    def __init__(self, n: int) -> None:
        self.n = n

    def complete(self, messages: list[dict], tools: list[dict], tool_choice: Any = None,
                 **_: Any) -> ModelReply:
        if messages[0]["content"].startswith("You are a sub-agent"):
            time.sleep(PAUSE)
            return ModelReply(f"found: {messages[1]['content']}")
        if messages[-1]["role"] == "tool":
            return ModelReply("done")
        return ModelReply(None, tool_calls=[
            {"id": f"d{i}", "type": "function", "function": {
                "name": "delegate_task", "arguments": json.dumps({"task": f"part {i}"})}}
            for i in range(self.n)])


def reads(n: int) -> float:
    steps = [parallel(*[tool_call("search", query=f"q{i}") for i in range(n)]), say("done")]
    return timed(lambda: Agent(ScriptedModel(steps), [search]).run("look"))


def writes_then_reads(n: int) -> float:
    calls = [tool_call("pay", order="ORD-1")] + [tool_call("search", query=f"q{i}")
                                                 for i in range(n)]
    steps = [parallel(*calls), say("done")]
    return timed(lambda: Agent(ScriptedModel(steps), [pay, search]).run("pay, then look"))


def delegations(n: int) -> float:
    return timed(lambda: Agent(Delegating(n), subagents=True).run("split it"))


def timed(run: Any) -> float:
    best = float("inf")
    for _ in range(TRIES):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
        assert result.outcome == "completed", (result.outcome, result.error)
    return best


def main() -> None:
    rows = [("four reads of 300 ms", reads(4), reads(1)),
            ("three delegations (model waits 300 ms)", delegations(3), delegations(1)),
            ("a write, then three reads", writes_then_reads(3),
             writes_then_reads(0) + reads(1))]
    print(f"{'round':<40} {'round':>8} {'floor':>8} {'ratio':>6}  target <= {TARGET}x")
    ok = overlaps[0] == 0
    for name, took, floor in rows:
        ratio = took / floor
        ok &= ratio <= TARGET
        print(f"{name:<40} {took:>7.3f}s {floor:>7.3f}s {ratio:>5.2f}x")
    print(f"the write overlapped another call: {overlaps[0]} time(s) (target: 0)")
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
