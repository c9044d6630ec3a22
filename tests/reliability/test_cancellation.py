"""Cancellation: wherever the run is when ``cancel`` is set, it ends within a second.

The stop button is pressed from another thread while the run waits on a model
request, a tool, a shell command or a sub-agent. Each run must end ``cancelled``
within a second of the press, with children killed and the transcript kept (the
folder's autouse check validates it). Each test prints its latency.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import (Agent, Event, OpenAIModel, ScriptedModel, Workspace, parallel, say, tool,
                     tool_call)
from harness import RunControl
from tests.fake_openai import FakeOpenAI, reply, slow

from tests.reliability.procs import none_left_in

pytest_plugins = ("tests.fake_openai",)  # the `fake_openai` fixture

PRESS_AFTER = 0.3  # seconds after the step under test has started
WITHIN = 1.0
PLAN = tool_call("todo_write", todos=[{"content": "Wait for it", "status": "in_progress"}],
                 id="p1")
LONG_JOB = '{"command": "sleep 30 & sleep 30"}'


class StopButton:
    """A `threading.Event`, pressed from a timer thread ``after`` seconds past the first
    event that ``when`` accepts, so it is pressed while that step is under way.

    Give it to the agent as an observer; ``latency()`` is the time since the press.
    """

    def __init__(self, when: Callable[[Event], bool], after: float = PRESS_AFTER) -> None:
        self.event, self.when, self.after = threading.Event(), when, after
        self.timer: threading.Timer | None = None
        self.pressed: float | None = None

    def on_event(self, event: Event) -> None:
        if self.timer is None and self.when(event):
            self.timer = threading.Timer(self.after, self.press)
            self.timer.start()

    def press(self) -> None:
        self.pressed = time.monotonic()
        self.event.set()

    def latency(self) -> float:
        assert self.pressed is not None, "the run ended before the button was pressed"
        return time.monotonic() - self.pressed


def run_and_time(model: Any, tools: list, button: StopButton, label: str, **settings: Any):
    agent = Agent(model, tools, observers=[button], **settings)
    result = agent.run("Wait for it", cancel=button.event)
    latency = button.latency()
    print(f"\ncancel latency, {label}: {latency * 1000:.0f} ms")
    assert result.outcome == "cancelled"
    assert latency < WITHIN
    return result


def on_call(call_id: str) -> Callable[[Event], bool]:
    return lambda event: event.type == "tool_call" and event.call_id == call_id


def test_cancel_during_a_model_request_over_http(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(PLAN), slow(10.0))
    model = OpenAIModel(model="m", base_url=fake_openai.base_url, api_key="sk-test-cancel",
                        max_retries=0, timeout=30)
    button = StopButton(lambda e: e.type == "model_request" and e.turn == 2)
    result = run_and_time(model, [], button, "model request over HTTP", planning=True)
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool"]
    assert [i.content for i in result.plan] == ["Wait for it"]


def test_cancel_during_a_tool_that_waits_cooperatively() -> None:
    @tool
    def wait_for_data(control: RunControl) -> str:
        """Wait for data, checking the run's stop button as it waits."""
        while (stop := control.stop_reason()) is None:
            time.sleep(0.01)
        return f"gave up waiting ({stop})"

    model = ScriptedModel([parallel(tool_call("wait_for_data", id="w1"),
                                    tool_call("wait_for_data", id="w2"))])
    result = run_and_time(model, [wait_for_data], StopButton(on_call("w1")),
                          "tool that checks the run control")
    assert [m["content"] for m in result.messages[3:]] == [
        "gave up waiting (cancelled)", "Not run: the run stopped (cancelled)."]


def test_a_tool_that_blocks_runs_to_its_end_and_cancel_stops_the_next_call() -> None:
    """By design: tools run in the loop's thread and cancel is cooperative. A tool that
    never looks at its `RunControl` finishes (its result is known and kept); the cancel then
    ends the run before anything else runs. Long tools should take a `RunControl` argument
    and poll it, as run_shell and CommandTool do."""
    ran = []

    @tool
    def fetch() -> str:
        """Stands for a blocking call that knows nothing of the run (a socket read)."""
        threading.Event().wait(0.6)
        ran.append("fetch")
        return "fetched"

    model = ScriptedModel([parallel(tool_call("fetch", id="f1"), tool_call("fetch", id="f2"))])
    button = StopButton(on_call("f1"))
    result = Agent(model, [fetch], observers=[button]).run("go", cancel=button.event)
    assert result.outcome == "cancelled"
    assert ran == ["fetch"]
    assert [m["content"] for m in result.messages[3:]] == [
        "fetched", "Not run: the run stopped (cancelled)."]


def test_cancel_during_a_shell_command_kills_it_and_its_children(tmp_path: Path) -> None:
    model = ScriptedModel([tool_call("run_shell", LONG_JOB, id="s1")])
    result = run_and_time(model, Workspace(tmp_path, shell_timeout=30).tools,
                          StopButton(on_call("s1")), "run_shell")
    assert "stopped: cancelled" in result.messages[-1]["content"]
    assert none_left_in(tmp_path)


def test_cancel_during_a_subagents_shell_command_ends_child_and_parent(tmp_path: Path) -> None:
    model = ScriptedModel([
        PLAN,
        tool_call("delegate_task", task="run the long job", id="d1"),
        tool_call("run_shell", LONG_JOB, id="s1"),
        say("never asked"),
    ])
    result = run_and_time(model, Workspace(tmp_path, shell_timeout=30).tools,
                          StopButton(on_call("s1")), "sub-agent's run_shell",
                          planning=True, subagents=True, subagent_tools=("run_shell",))
    assert result.delegations[0].outcome == "cancelled"
    assert len(model.requests) == 3
    assert [i.content for i in result.plan] == ["Wait for it"]
    assert none_left_in(tmp_path)


def test_cancel_during_a_subagents_model_request() -> None:
    def thinking(messages: list[dict]) -> dict:
        time.sleep(3)  # left to finish in its thread; the run does not wait for it
        return say("too late")

    model = ScriptedModel([tool_call("delegate_task", task="think", id="d1"),
                           thinking, say("never asked")])
    button = StopButton(lambda e: e.type == "model_request" and e.depth == 1)
    result = run_and_time(model, [], button, "sub-agent's model request", subagents=True)
    assert result.delegations[0].outcome == "cancelled"
    assert result.messages[-1]["content"].startswith("[sub-agent stopped early: cancelled]")
