"""Calls of one round that may run at once do (issue 29): each admitted in the model's
order (hooks, approvals, the call log's intent, the budget), run together, answered in
the model's order. A call with side effects never overlaps another.

Concurrency is proved with barriers, not timings: four reads that each wait for the
other three at a `threading.Barrier` can only all pass if they run at the same time
(run one after another, the first waits out the barrier's timeout and fails).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from harness import Agent, Permissions, ScriptedModel, browser, parallel, say, tool, tool_call
from harness.control import RunControl
from harness.durable import CallLog
from harness.hooks import Hooks
from harness.models import ModelReply

WAIT = 5.0  # seconds a barrier waits: far more than any of these calls takes together


def reads(n: int, barrier: threading.Barrier | None = None, log: list | None = None,
          pause: float = 0.0) -> list:
    """``n`` read tools ``read_0``... that meet at ``barrier`` (if given) and log start/end."""
    made = []
    for i in range(n):
        def read(key: str, i: int = i) -> str:
            """Read one key."""
            if log is not None:
                log.append(("start", i))
            if barrier is not None:
                barrier.wait(WAIT)
            time.sleep(pause)
            if log is not None:
                log.append(("end", i))
            return f"value of {key} from read_{i}"
        made.append(tool(read, name=f"read_{i}", parallel=True))
    return made


def round_of(*names: str) -> dict:
    return parallel(*[tool_call(name, key=f"k{j}") for j, name in enumerate(names)])


def results(result) -> list[tuple[str, str]]:
    return [(e.data["tool_name"], e.data["status"]) for e in result.events
            if e.type == "tool_result"]


def test_reads_of_one_reply_run_at_the_same_time_and_are_answered_in_order():
    log: list = []
    tools = reads(4, threading.Barrier(4), log)
    model = ScriptedModel([round_of("read_0", "read_1", "read_2", "read_3"), say("done")])
    result = Agent(model, tools).run("read four")
    assert result.outcome == "completed"
    assert [s for _, s in results(result)] == ["ok"] * 4  # none timed out at the barrier
    starts = [i for kind, i in log[:4]]
    assert sorted(starts) == [0, 1, 2, 3] and all(k == "start" for k, _ in log[:4])
    calls = result.messages[2]["tool_calls"]
    answers = [m for m in result.messages if m["role"] == "tool"]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
    assert [a["content"] for a in answers] == [f"value of k{i} from read_{i}" for i in range(4)]


def test_the_transcript_keeps_the_models_order_when_a_later_call_ends_first():
    @tool(parallel=True)
    def slow(key: str) -> str:
        """Slow."""
        time.sleep(0.3)
        return "slow " + key

    @tool(parallel=True)
    def quick(key: str) -> str:
        """Quick."""
        return "quick " + key

    model = ScriptedModel([parallel(tool_call("slow", key="a"), tool_call("quick", key="b")),
                           say("ok")])
    result = Agent(model, [slow, quick]).run("x")
    assert [m["content"] for m in result.messages if m["role"] == "tool"] == ["slow a",
                                                                               "quick b"]
    assert [e.data["tool_name"] for e in result.events if e.type == "tool_result"] == [
        "slow", "quick"]


def test_a_user_tool_that_does_not_say_runs_alone():
    barrier = threading.Barrier(2)

    @tool
    def unsaid(key: str) -> str:
        """A user's tool that does not say it is safe beside others."""
        barrier.wait(0.5)
        return key

    model = ScriptedModel([parallel(tool_call("unsaid", key="a"), tool_call("unsaid", key="b")),
                           say("ok")])
    result = Agent(model, [unsaid]).run("x")
    assert [s for _, s in results(result)] == ["error", "error"]  # each waited alone


def test_a_call_with_side_effects_never_overlaps_another():
    active, overlaps, order = [0], [], []
    lock = threading.Lock()

    def enter(name: str) -> None:
        with lock:
            active[0] += 1
            order.append(name)

    def leave() -> None:
        with lock:
            active[0] -= 1

    @tool(side_effects=True, parallel=True)  # parallel is ignored for a tool with effects
    def pay(key: str) -> str:
        """Pay."""
        enter("pay")
        with lock:
            if active[0] != 1:
                overlaps.append(active[0])
        time.sleep(0.1)
        with lock:
            if active[0] != 1:
                overlaps.append(active[0])
        leave()
        return "paid"

    @tool(parallel=True)
    def look(key: str) -> str:
        """Look."""
        enter("look")
        time.sleep(0.05)
        leave()
        return "seen"

    model = ScriptedModel([parallel(tool_call("look", key="1"), tool_call("look", key="2"),
                                    tool_call("pay", key="3"), tool_call("look", key="4"),
                                    tool_call("look", key="5")), say("ok")])
    result = Agent(model, [pay, look]).run("x")
    assert [s for _, s in results(result)] == ["ok"] * 5
    assert overlaps == []
    assert order.index("pay") == 2  # the reads before it ended first, those after waited


def test_a_hook_that_blocks_one_call_of_four_leaves_the_others_running():
    tools = reads(3, threading.Barrier(3))
    tools.append(reads(4)[3])  # read_3: no barrier
    seen = []

    def guard(event) -> str | None:
        seen.append(event.data["tool_name"])
        return "not this one" if event.data["tool_name"] == "read_3" else None

    model = ScriptedModel([round_of("read_0", "read_1", "read_3", "read_2"), say("ok")])
    hooks = Hooks()
    hooks.on("pre_tool_use", guard)
    result = Agent(model, tools, hooks=hooks).run("x")
    assert seen == ["read_0", "read_1", "read_3", "read_2"]  # each seen before any ran
    assert results(result) == [("read_0", "ok"), ("read_1", "ok"), ("read_3", "blocked"),
                               ("read_2", "ok")]
    blocked = [m for m in result.messages if m["role"] == "tool"][2]
    assert "not this one" in blocked["content"]


def test_approvals_are_asked_one_at_a_time_in_the_models_order():
    asked, log = [], []
    tools = reads(4, threading.Barrier(2), log)  # read_0 and read_2 are allowed, and meet
    model = ScriptedModel([round_of("read_0", "read_1", "read_2", "read_3"), say("ok")])

    def approve(name: str, arguments: dict) -> bool:
        asked.append((name, len(log)))  # no read has started while approvals are asked
        return name == "read_1"

    perms = Permissions({"read_0": "allow", "read_2": "allow", "read_1": "ask",
                         "read_3": "ask"}, approve=approve)
    tools[1] = reads(2)[1]  # read_1 and read_3 do not meet anyone
    tools[3] = reads(4)[3]
    result = Agent(model, tools, permissions=perms).run("x")
    assert asked == [("read_1", 0), ("read_3", 0)]
    assert results(result) == [("read_0", "ok"), ("read_1", "ok"), ("read_2", "ok"),
                               ("read_3", "blocked")]
    kinds = [e.type for e in result.events if e.type.startswith("approval")]
    assert kinds == ["approval_request", "approval_result"] * 2


def test_cancel_mid_round_gives_every_call_its_one_tool_message():
    cancel = threading.Event()
    started = threading.Barrier(3)

    @tool(parallel=True)
    def wait_for_cancel(key: str, control: RunControl) -> str:
        """Waits with the others; the run is cancelled while the three run."""
        started.wait(WAIT)
        cancel.set()
        return f"{key}: stopped by {control.stop_reason()}"

    @tool
    def write(key: str) -> str:
        """A call after them, alone: the cancel stops the round before it."""
        return "wrote " + key

    model = ScriptedModel([parallel(*[tool_call("wait_for_cancel", key=str(i))
                                      for i in range(3)],
                                    tool_call("write", key="after")), say("never")])
    result = Agent(model, [wait_for_cancel, write]).run("x", cancel=cancel)
    assert result.outcome == "cancelled"
    calls = result.messages[2]["tool_calls"]
    answers = [m for m in result.messages if m["role"] == "tool"]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]  # one each
    assert [a["content"] for a in answers[:3]] == [f"{i}: stopped by cancelled"
                                                   for i in range(3)]
    assert answers[3]["content"] == "Not run: the run stopped (cancelled)."


def test_the_call_log_holds_each_intent_before_any_call_of_the_run_starts(tmp_path):
    path = tmp_path / "calls.jsonl"
    seen_at_start: list[int] = []

    def intents() -> int:
        return sum(json.loads(line).get("phase") == "intent"
                   for line in path.read_text().splitlines()) if path.exists() else 0

    @tool(parallel=True)
    def look(key: str) -> str:
        """Look."""
        seen_at_start.append(intents())
        return key

    model = ScriptedModel([parallel(*[tool_call("look", key=str(i)) for i in range(3)]),
                           say("ok")])
    result = Agent(model, [look]).run("x", call_log=CallLog(path))
    assert [s for _, s in results(result)] == ["ok"] * 3
    assert seen_at_start == [3, 3, 3]  # every intent of the run's calls was written first


def test_racing_calls_never_pass_the_tool_call_budget():
    ran = []

    @tool(parallel=True)
    def look(key: str) -> str:
        """Look."""
        ran.append(key)
        return key

    model = ScriptedModel([parallel(*[tool_call("look", key=str(i)) for i in range(5)]),
                           say("ok")])
    result = Agent(model, [look], max_tool_calls=3).run("x")
    assert result.outcome == "tool_call_limit"
    assert sorted(ran) == ["0", "1", "2"]
    answers = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert answers[:3] == ["0", "1", "2"] and all(a.startswith("Not run") for a in answers[3:])
    assert len(answers) == 5


class Delegator:
    """A model that takes requests in any order: the parent delegates ``n`` tasks in one
    reply; each sub-agent waits at a barrier for its siblings (so they must run at the
    same time), then answers."""

    model = "delegator"

    def __init__(self, n: int, barrier: threading.Barrier | None = None,
                 wait: float = WAIT) -> None:
        self.n, self.barrier, self.wait = n, barrier, wait
        self.lock, self.requests = threading.Lock(), 0

    def complete(self, messages, tools, tool_choice=None, **_: Any) -> ModelReply:
        with self.lock:
            self.requests += 1
        if messages[0]["content"].startswith("You are a sub-agent"):
            if self.barrier is not None:
                self.barrier.wait(self.wait)
            return ModelReply(content=f"done: {messages[1]['content']}")
        if messages[-1]["role"] == "tool":
            return ModelReply(content="all done")
        calls = [{"id": f"d{i}", "type": "function", "function": {
            "name": "delegate_task", "arguments": json.dumps({"task": f"task {i}"})}}
            for i in range(self.n)]
        return ModelReply(None, tool_calls=calls)


def test_delegations_whose_sub_agents_only_read_run_at_the_same_time():
    model = Delegator(3, threading.Barrier(3))
    result = Agent(model, reads(1), subagents=True, subagent_tools=["read_0"]).run("x")
    assert result.outcome == "completed", result.error
    answers = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert answers == [f"done: task {i}" for i in range(3)]
    # numbered in the model's order, whichever thread started first (a resumed run's
    # call log knows a sub-agent's calls by its id)
    assert [(d.child_id, d.task) for d in result.delegations] == [
        (f"main.sub{i + 1}", f"task {i}") for i in range(3)]


def test_sub_agents_with_a_writing_tool_run_one_at_a_time():
    @tool(side_effects=True)
    def write(key: str) -> str:
        """Write."""
        return key

    model = Delegator(2, threading.Barrier(2), wait=0.3)
    result = Agent(model, [write], subagents=True, subagent_tools=["write"]).run("x")
    answers = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert all("BrokenBarrierError" in a or "stopped early" in a for a in answers), answers


def test_sub_agents_racing_never_pass_the_request_budget():
    model = Delegator(4)
    result = Agent(model, reads(1), subagents=True, subagent_tools=["read_0"],
                   max_requests=3).run("x")
    assert model.requests <= 3
    assert result.outcome == "request_limit"


def test_in_a_browser_tab_calls_run_one_after_another(monkeypatch):
    monkeypatch.setattr(browser, "IN_BROWSER", True)
    log: list = []
    model = ScriptedModel([round_of("read_0", "read_1"), say("ok")])
    result = Agent(model, reads(2, None, log)).run("x")
    assert result.outcome == "completed"
    assert log == [("start", 0), ("end", 0), ("start", 1), ("end", 1)]


@pytest.mark.parametrize("names", [("read_file", "list_files", "search_docs")])
def test_the_workspaces_reading_tools_say_they_may_run_at_once(names):
    from harness import Workspace

    tools = {t.name: t for t in Workspace.sample().tools}
    assert all(tools[n].parallel for n in names)
    assert not any(tools[n].parallel for n in ("write_file", "edit_file", "run_shell"))
