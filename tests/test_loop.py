"""The loop: wire-format messages, one tool message per call, budgets, outcomes, events."""

from __future__ import annotations

import copy
import json
import pickle
import threading
import time

import pytest

from harness import Agent, Hooks, ScriptedModel, parallel, say, tool, tool_call
from harness.models import ModelError


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


def loop_forever(n: int) -> list[dict]:
    """A script that calls `add` in every reply and never answers."""
    return [tool_call("add", a=i, b=1, id=f"c{i}") for i in range(n)]


def tool_calls_answered(messages: list[dict]) -> bool:
    """Every tool call id of every assistant message has exactly one tool message."""
    asked = [c["id"] for m in messages if m["role"] == "assistant"
             for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return asked == answered


# -- messages --------------------------------------------------------------------------

def test_run_starts_with_system_and_user_messages():
    model = ScriptedModel([say("Hi")])
    result = Agent(model, system="Be brief.").run("Say hi")
    assert result.messages[:2] == [{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "Say hi"}]
    assert model.requests[0]["messages"] == result.messages[:2]


def test_messages_are_plain_wire_format_dicts():
    model = ScriptedModel([tool_call("add", a=2, b=3, id="c1"), say("5")])
    result = Agent(model, [add]).run("2+3?")
    assert json.loads(json.dumps(result.messages)) == result.messages
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool",
                                                    "assistant"]


def test_assistant_message_is_appended_as_the_model_sent_it():
    sent = parallel(tool_call("add", a=2, b=3, id="c1"), tool_call("echo", text="hé", id="c2"))
    result = Agent(ScriptedModel([sent, say("done")]), [add, echo]).run("go")
    assert result.messages[2] == sent


def test_final_answer_is_the_last_assistant_message():
    result = Agent(ScriptedModel([say("All done.")])).run("go")
    assert result.outcome == "completed"
    assert result.final == "All done."
    assert result.messages[-1] == {"role": "assistant", "content": "All done."}


def test_each_tool_call_gets_one_tool_message_in_call_order():
    model = ScriptedModel([
        parallel(tool_call("add", a=1, b=1, id="c1"), tool_call("echo", text="x", id="c2"),
                 tool_call("add", a=2, b=2, id="c3")),
        say("done"),
    ])
    result = Agent(model, [add, echo]).run("go")
    assert result.messages[3:6] == [
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
        {"role": "tool", "tool_call_id": "c2", "content": "x"},
        {"role": "tool", "tool_call_id": "c3", "content": "4"},
    ]


def test_parallel_calls_run_one_after_another_in_call_order():
    order = []

    @tool
    def note(label: str) -> str:
        """Remember a label."""
        order.append(label)
        return label

    model = ScriptedModel([parallel(*(tool_call("note", label=k, id=f"c{i}")
                                      for i, k in enumerate("bca"))), say("ok")])
    Agent(model, [note]).run("go")
    assert order == ["b", "c", "a"]


def test_refused_calls_still_get_their_tool_message():
    model = ScriptedModel([parallel(tool_call("nope", id="c1"), tool_call("add", "{bad", id="c2"),
                                    tool_call("add", a=1, b=2, id="c3")), say("done")])
    result = Agent(model, [add]).run("go")
    assert tool_calls_answered(result.messages)
    assert result.messages[5]["content"] == "3"


def test_next_request_carries_the_tool_results():
    model = ScriptedModel([tool_call("add", a=2, b=3, id="c1"), say("5")])
    result = Agent(model, [add]).run("2+3?")
    assert model.requests[1]["messages"] == result.messages[:4]


# -- budgets and cancel ------------------------------------------------------------------

def test_max_turns_counts_model_requests():
    model = ScriptedModel(loop_forever(10))
    result = Agent(model, [add], max_turns=3).run("loop")
    assert len(model.requests) == 3
    assert result.turns == 3


def test_turn_limit_ends_without_final_and_keeps_the_transcript():
    result = Agent(ScriptedModel(loop_forever(10)), [add], max_turns=2).run("loop")
    assert result.outcome == "turn_limit"
    assert result.final is None
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool",
                                                    "assistant", "tool"]


def test_answer_on_the_last_allowed_turn_completes():
    model = ScriptedModel([*loop_forever(2), say("made it")])
    result = Agent(model, [add], max_turns=3).run("go")
    assert (result.outcome, result.final) == ("completed", "made it")


def test_max_turns_below_one_is_refused():
    with pytest.raises(ValueError, match="max_turns"):
        Agent(ScriptedModel([say("x")]), max_turns=0).run("go")


@tool
def slow(seconds: float) -> str:
    """Sleep a little."""
    time.sleep(seconds)
    return "slept"


def test_time_limit_is_checked_before_the_next_model_request():
    model = ScriptedModel([tool_call("slow", seconds=0.12, id="c1"), say("late")])
    result = Agent(model, [slow], max_seconds=0.1).run("go")
    assert result.outcome == "time_limit"
    assert result.final is None
    assert len(model.requests) == 1
    assert result.messages[-1] == {"role": "tool", "tool_call_id": "c1", "content": "slept"}


def test_time_limit_is_checked_before_each_tool_call():
    model = ScriptedModel([parallel(tool_call("slow", seconds=0.12, id="c1"),
                                    tool_call("slow", seconds=0, id="c2"))])
    result = Agent(model, [slow], max_seconds=0.1).run("go")
    assert result.outcome == "time_limit"
    assert result.messages[-1]["tool_call_id"] == "c2"
    assert result.messages[-1]["content"].startswith("Not run")
    assert [e.call_id for e in result.events if e.type == "tool_result"] == ["c1"]


def test_model_request_running_past_the_deadline_ends_time_limit():
    def thinking(messages: list[dict]) -> dict:
        time.sleep(0.5)  # left running in its thread; the run does not wait for it
        return say("too late")

    started = time.monotonic()
    result = Agent(ScriptedModel([thinking]), max_seconds=0.03).run("go")
    assert result.outcome == "time_limit"
    assert time.monotonic() - started < 0.4
    assert [m["role"] for m in result.messages] == ["system", "user"]


def test_cancel_set_before_the_run_sends_no_request():
    cancel = threading.Event()
    cancel.set()
    model = ScriptedModel([say("never")])
    result = Agent(model).run("go", cancel=cancel)
    assert result.outcome == "cancelled"
    assert model.requests == []
    assert len(result.messages) == 2


def test_cancel_set_by_a_tool_answers_the_rest_of_the_round_with_not_run():
    cancel, ran = threading.Event(), []

    @tool
    def work(n: int) -> str:
        """Do a piece of work; the first piece asks to stop."""
        ran.append(n)
        cancel.set()
        return f"did {n}"

    model = ScriptedModel([parallel(tool_call("work", n=1, id="c1"),
                                    tool_call("work", n=2, id="c2"),
                                    tool_call("work", n=3, id="c3")), say("never")])
    result = Agent(model, [work]).run("go", cancel=cancel)
    assert result.outcome == "cancelled"
    assert result.final is None
    assert ran == [1]
    assert len(model.requests) == 1
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3"]
    assert tool_messages[0]["content"] == "did 1"
    assert all(m["content"].startswith("Not run") for m in tool_messages[1:])


def test_cancel_set_by_the_last_call_stops_before_the_next_request():
    cancel = threading.Event()

    @tool
    def stop_now() -> str:
        """Ask the run to stop."""
        cancel.set()
        return "stopping"

    model = ScriptedModel([tool_call("stop_now", id="c1"), say("never")])
    result = Agent(model, [stop_now]).run("go", cancel=cancel)
    assert result.outcome == "cancelled"
    assert len(model.requests) == 1
    assert tool_calls_answered(result.messages)


def test_cancel_without_is_set_is_refused():
    with pytest.raises(TypeError, match="is_set"):
        Agent(ScriptedModel([say("x")])).run("go", cancel=True)


@tool
def interrupted() -> str:
    """Stands for Kernel -> Interrupt while a tool runs."""
    raise KeyboardInterrupt


def interrupted_run() -> tuple:
    model = ScriptedModel([parallel(tool_call("interrupted", id="c1"),
                                    tool_call("add", a=1, b=1, id="c2"))])
    return Agent(model, [interrupted, add]).run("go")


def test_keyboard_interrupt_in_a_tool_ends_cancelled_and_keeps_the_transcript():
    result = interrupted_run()
    assert result.outcome == "cancelled"
    assert "KeyboardInterrupt" in result.error
    assert result.messages[2]["tool_calls"][0]["id"] == "c1"
    assert result.events[-1].type == "run_end"


def test_keyboard_interrupt_in_a_tool_still_answers_every_call_of_the_round():
    messages = interrupted_run().messages
    assert tool_calls_answered(messages)
    assert messages[-1]["content"].startswith("Not run")


# -- model errors ------------------------------------------------------------------------

def test_script_running_out_ends_model_error_with_a_clear_error():
    model = ScriptedModel([tool_call("add", a=1, b=1, id="c1")])
    result = Agent(model, [add]).run("go")
    assert result.outcome == "model_error"
    assert result.final is None
    assert "the script has 1 step" in result.error
    assert "add a step" in result.error


def test_failed_model_request_adds_nothing_to_messages():
    model = ScriptedModel([tool_call("add", a=1, b=1, id="c1")])
    result = Agent(model, [add]).run("go")
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool"]
    assert model.requests[1]["messages"] == result.messages


def test_step_that_raises_ends_model_error():
    def broken(messages: list[dict]) -> dict:
        raise ConnectionError("server went away")

    result = Agent(ScriptedModel([broken])).run("go")
    assert result.outcome == "model_error"
    assert result.error == "ConnectionError: server went away"
    assert len(result.messages) == 2


def test_model_error_keeps_its_message():
    class Down:
        def complete(self, messages, tools, tool_choice=None):
            raise ModelError("HTTP 503 from the server")

    result = Agent(Down()).run("go")
    assert (result.outcome, result.error) == ("model_error", "HTTP 503 from the server")


# -- usage ---------------------------------------------------------------------------------

def test_usage_is_the_exact_sum_when_steps_carry_usage():
    model = ScriptedModel([
        {**tool_call("add", a=1, b=1, id="c1"),
         "usage": {"prompt_tokens": 100, "completion_tokens": 7}},
        {**say("2"), "usage": {"prompt_tokens": 130, "completion_tokens": 3}},
    ])
    usage = Agent(model, [add]).run("go").usage
    assert usage == {"prompt_tokens": 230, "completion_tokens": 10, "total_tokens": 240,
                     "estimated": False}


def test_usage_is_estimated_when_the_script_gives_none():
    usage = Agent(ScriptedModel([say("Hello there")])).run("Say hello").usage
    assert usage["estimated"] is True
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


# -- events ---------------------------------------------------------------------------------

def one_tool_run(**agent_kwargs) -> tuple:
    model = ScriptedModel([tool_call("add", a=2, b=3, id="c1"), say("5")])
    return Agent(model, [add], **agent_kwargs).run("2+3?")


def test_events_follow_the_run_in_order():
    core = ("run_start", "model_request", "model_reply", "tool_call", "tool_result", "run_end")
    types = [e.type for e in one_tool_run().events if e.type in core]
    assert types == ["run_start", "model_request", "model_reply", "tool_call", "tool_result",
                     "model_request", "model_reply", "run_end"]


def test_every_event_has_type_agent_id_and_depth_zero_at_the_top():
    events = one_tool_run().events
    assert all(isinstance(e.type, str) and e.agent_id == "main" and e.depth == 0
               for e in events)


def test_tool_result_event_carries_tool_name_ok_and_output():
    done = next(e for e in one_tool_run().events if e.type == "tool_result")
    assert (done.tool_name, done.ok, done.output) == ("add", True, "5")


def test_run_end_event_says_the_outcome():
    end = one_tool_run().events[-1]
    assert end.type == "run_end"
    assert (end.outcome, end.final) == ("completed", "5")


def test_hooks_receive_the_same_event_objects_as_the_result():
    seen, hooks = [], Hooks()
    for name in ("user_prompt_submit", "pre_tool_use", "post_tool_use", "stop"):
        hooks.on(name, seen.append)
    events = one_tool_run(hooks=hooks).events
    by_type = {e.type: e for e in events}
    assert [e.type for e in seen] == ["run_start", "tool_call", "tool_result", "stop"]
    assert all(e is by_type[e.type] for e in seen)


def test_events_can_be_copied_and_pickled():
    event = next(e for e in one_tool_run().events if e.type == "tool_result")
    assert copy.deepcopy(event) == event
    assert pickle.loads(pickle.dumps(event)) == event
    with pytest.raises(AttributeError, match="'tool_result' event has no field 'nope'"):
        _ = event.nope


def test_observers_see_every_event_as_it_happens():
    seen = []
    events = one_tool_run(observers=[seen.append]).events
    assert len(seen) == len(events)
    assert all(a is b for a, b in zip(seen, events, strict=True))


# -- the agent object ------------------------------------------------------------------------

def test_run_twice_gives_independent_results():
    model = ScriptedModel([tool_call("add", a=1, b=1, id="c1"), say("first"), say("second")])
    agent = Agent(model, [add])
    first = agent.run("one")
    first_messages = json.loads(json.dumps(first.messages))
    second = agent.run("two")
    assert (first.final, second.final) == ("first", "second")
    assert first.messages == first_messages
    assert second.messages[1:] == [{"role": "user", "content": "two"},
                                   {"role": "assistant", "content": "second"}]
    assert len(second.events) < len(first.events)


def test_duplicate_tool_names_are_refused():
    @tool(name="add")
    def other_add(a: int) -> int:
        """Another add."""
        return a

    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Agent(ScriptedModel([]), [add, other_add])


def test_a_plain_function_in_tools_raises_type_error():
    def plain(a: int) -> int:
        return a

    with pytest.raises(TypeError, match="@tool"):
        Agent(ScriptedModel([]), [add, plain])
