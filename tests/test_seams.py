"""The seams issue 16 added: a fixed point before each request, conversations that go
on, your own mechanisms, and a tool that gets the run's control by argument."""

from __future__ import annotations

import threading

import pytest

from harness import Agent, Mechanism, RunControl, ScriptedModel, Settings, say, tool, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class KeepLast(Mechanism):
    """Sends the system prompt and the last two messages only (a toy trimming rule)."""

    def before_request(self, messages: list[dict]) -> list[dict]:
        return [messages[0], *messages[-2:]] if len(messages) > 3 else messages


def test_before_request_shapes_what_is_sent_and_the_transcript_keeps_everything():
    model = ScriptedModel([tool_call("add", a=1, b=2), tool_call("add", a=3, b=4), say("7")])
    result = Agent(model, [add], mechanisms=[KeepLast]).run("add things")
    sent = [len(r["messages"]) for r in model.requests]
    assert sent == [2, 3, 3]  # the third request would hold 6 messages untrimmed
    assert len(result.messages) == 7  # system, user, 2 x (assistant, tool), answer
    assert model.requests[2]["messages"][0]["role"] == "system"


def test_tool_choice_is_asked_once_every_mechanism_has_shaped_the_request():
    """Two fixed points, in order: every before_request, then every tool_choice, so a
    mechanism's tool_choice can answer for the request as the last mechanism left it."""
    asked = []

    class First(Mechanism):
        def before_request(self, messages: list[dict]) -> list[dict]:
            asked.append("first shapes")
            return messages

        def tool_choice(self) -> str:
            asked.append("first chooses")
            return "auto"

    class Second(Mechanism):
        def before_request(self, messages: list[dict]) -> list[dict]:
            asked.append("second shapes")
            return messages

    Agent(ScriptedModel([say("done")]), [add], mechanisms=[First, Second]).run("go")
    assert asked == ["first shapes", "second shapes", "first chooses"]


def test_each_run_gets_a_fresh_mechanism_from_the_factory():
    made = []

    class Counting(Mechanism):
        def __init__(self) -> None:
            made.append(self)

    agent = Agent(ScriptedModel([say("a"), say("b")]), mechanisms=[Counting])
    agent.run("one")
    agent.run("two")
    assert len(made) == 2 and made[0] is not made[1]


def test_a_second_run_with_messages_continues_the_conversation_with_one_system_prompt():
    model = ScriptedModel([say("Hello, Ada."), say("You are Ada.")])
    agent = Agent(model)
    first = agent.run("My name is Ada.")
    second = agent.run("What is my name?", messages=first.messages)
    sent = model.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "My name is Ada." and sent[3]["content"] == "What is my name?"
    assert second.messages[:3] == first.messages[:3]


def test_a_tool_that_asks_for_the_run_control_gets_it_and_the_model_never_sees_it():
    seen = []

    @tool
    def wait(seconds: float, control: RunControl) -> str:
        """Wait, checking the run's stop button."""
        seen.append(control)
        stop = threading.Event()
        while control.stop_reason() is None and not stop.wait(0.01):
            pass
        return f"stopped: {control.stop_reason()}"

    assert list(wait.schema()["function"]["parameters"]["properties"]) == ["seconds"]
    model = ScriptedModel([tool_call("wait", seconds=10), say("done")])
    result = Agent(model, [wait], max_seconds=0.2).run("wait")
    assert isinstance(seen[0], RunControl)
    assert result.outcome == "time_limit"
    assert result.messages[3]["content"] == "stopped: time_limit"


def test_settings_are_one_object_and_a_wrong_name_says_which_exist():
    agent = Agent(ScriptedModel([]), settings=Settings(max_turns=3), planning=True)
    assert (agent.max_turns, agent.planning) == (3, True)
    with pytest.raises(TypeError, match="max_turns"):
        Agent(ScriptedModel([]), max_turn=3)
    with pytest.raises(ValueError, match="max_requests must be at least 1"):
        Agent(ScriptedModel([]), max_requests=0)


def test_a_raising_hook_error_hook_is_warned_about_and_the_run_returns():
    from harness import Hooks

    hooks = Hooks()
    hooks.on("run_start", lambda event: 1 / 0)
    hooks.on("hook_error", lambda event: 1 / 0)
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        result = Agent(ScriptedModel([say("done")]), hooks=hooks).run("go")
    assert result.outcome == "completed"
    assert [e.hook for e in result.events if e.type == "hook_error"] == ["run_start"]
