"""ScriptedModel: plays a script back, records every request, fails clearly when done."""

from __future__ import annotations

import threading
import time

import pytest

from harness import Agent, ModelError, RequestInfo, ScriptedModel, parallel, say, tool, tool_call
from harness.scripted import ScriptExhausted
from harness.reminder import forced


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


SYSTEM_AND_USER = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def test_every_request_is_recorded_with_messages_tools_and_tool_choice():
    model = ScriptedModel([tool_call("add", {"a": 1, "b": 2}, id="c1"), say("3")])
    result = Agent(model, [add]).run("1+2?")
    assert len(model.requests) == 2
    assert model.requests[1] == {"messages": result.messages[:4], "tools": [add.schema()],
                                 "tool_choice": "auto"}


def test_recorded_messages_are_a_copy_of_that_moment():
    model = ScriptedModel([tool_call("add", {"a": 1, "b": 2}, id="c1"), say("3")])
    result = Agent(model, [add]).run("1+2?")
    assert len(model.requests[0]["messages"]) == 2
    assert model.requests[0]["messages"] is not result.messages


def test_without_tools_the_request_has_no_tools_and_no_tool_choice():
    model = ScriptedModel([say("hi")])
    Agent(model).run("hello")
    assert model.requests[0]["tools"] == []
    assert model.requests[0]["tool_choice"] is None


def test_forced_tool_choice_is_recorded_as_sent():
    model = ScriptedModel([tool_call("todo_write", {"todos": []}, id="t1"), say("done")])
    Agent(model, planning=True).run("plan it", plan_first=True)
    assert model.requests[0]["tool_choice"] == forced("todo_write")
    assert model.requests[1]["tool_choice"] == "auto"


def test_step_usage_is_reported_but_not_put_in_the_transcript():
    model = ScriptedModel([{**say("hi"), "usage": {"prompt_tokens": 11, "completion_tokens": 2}}])
    result = Agent(model).run("hello")
    assert result.messages[-1] == {"role": "assistant", "content": "hi"}
    assert result.usage == {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13,
                            "estimated": False}


def test_callable_step_can_quote_real_tool_output():
    model = ScriptedModel([
        tool_call("add", {"a": 20, "b": 22}, id="c1"),
        lambda messages: say(f"The sum is {messages[-1]['content']}."),
    ])
    assert Agent(model, [add]).run("20+22?").final == "The sum is 42."


def test_callable_step_receives_the_messages_so_far():
    received = []

    def answer(messages: list[dict]) -> dict:
        received.append(messages)
        return say("ok")

    result = Agent(ScriptedModel([answer])).run("hello")
    assert received == [result.messages[:2]]


def test_callable_step_cannot_change_the_transcript_by_appending():
    def sneaky(messages: list[dict]) -> dict:
        messages.append({"role": "user", "content": "injected"})
        return say("ok")

    result = Agent(ScriptedModel([sneaky])).run("hello")
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]


def test_running_out_says_how_many_steps_and_what_to_do():
    model = ScriptedModel([say("a"), say("b")])
    model.complete(SYSTEM_AND_USER, [])
    model.complete(SYSTEM_AND_USER, [])
    with pytest.raises(ScriptExhausted) as out:
        model.complete(SYSTEM_AND_USER, [])
    assert str(out.value) == ("ScriptedModel has no step left for request #3 (the script has "
                              "2 steps): add a step, or lower max_turns")
    assert isinstance(out.value, ModelError)


def test_remaining_counts_down_and_stops_at_zero():
    model = ScriptedModel([say("a")])
    assert model.remaining == 1
    model.complete(SYSTEM_AND_USER, [])
    assert model.remaining == 0
    with pytest.raises(ScriptExhausted):
        model.complete(SYSTEM_AND_USER, [])
    assert model.remaining == 0


def test_dict_arguments_are_sent_as_a_json_string():
    reply = ScriptedModel([{"tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "add", "arguments": {"a": 1, "b": "é"}}}]}]).complete(SYSTEM_AND_USER, [])
    assert reply.tool_calls[0]["function"]["arguments"] == '{"a": 1, "b": "é"}'


def test_calls_without_ids_get_ids_unique_across_the_run():
    bare = {"tool_calls": [{"function": {"name": "add", "arguments": {"a": 1, "b": 1}}}]}
    result = Agent(ScriptedModel([bare, bare, say("done")]), [add]).run("twice")
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["2", "2"]
    assert len({m["tool_call_id"] for m in tool_messages}) == 2


def test_a_step_that_is_not_a_message_is_a_clear_model_error():
    result = Agent(ScriptedModel([lambda messages: "just text"])).run("hello")
    assert result.outcome == "model_error"
    assert result.error == "expected an assistant message dict, got str"


def test_reply_usage_is_estimated_and_marked_without_script_usage():
    reply = ScriptedModel([say("four")]).complete(SYSTEM_AND_USER, [])
    assert reply.usage["estimated"] is True
    assert reply.usage["completion_tokens"] == 1


def test_estimate_of_a_growing_transcript_matches_a_fresh_count():
    model, messages = ScriptedModel([say("a")] * 3), list(SYSTEM_AND_USER)
    for text in ("x" * 400, "y" * 30, "z"):
        messages.append({"role": "user", "content": text})
        grown = model.complete(messages, [add.schema()]).usage["prompt_tokens"]
    fresh = ScriptedModel([say("a")]).complete(list(messages), [add.schema()])
    assert grown == fresh.usage["prompt_tokens"] > 100


def test_recorded_requests_survive_changes_to_the_run_messages():
    model = ScriptedModel([tool_call("add", {"a": 1, "b": 2}, id="c1"), say("3")])
    result = Agent(model, [add]).run("1+2?")
    expected = [list(result.messages[:2]), list(result.messages[:4])]
    result.messages.clear()
    assert [r["messages"] for r in model.requests] == expected


def test_a_list_that_did_not_just_grow_is_recorded_afresh():
    model = ScriptedModel([say("a"), say("b"), say("c")])
    messages = list(SYSTEM_AND_USER)
    model.complete(messages, [])
    messages[-1] = {"role": "user", "content": "changed"}
    model.complete(messages, [])
    model.complete(SYSTEM_AND_USER[:1], [])
    assert [r["messages"] for r in model.requests] == [
        SYSTEM_AND_USER, [SYSTEM_AND_USER[0], {"role": "user", "content": "changed"}],
        SYSTEM_AND_USER[:1]]


def test_requests_keep_what_was_sent_when_a_message_is_edited_in_place():
    model = ScriptedModel([say("a"), say("b")])
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "first"}]
    model.complete(messages, [])
    messages[1]["content"] = "edited"
    messages.append({"role": "user", "content": "more"})
    model.complete(messages, [])
    assert [m["content"] for m in model.requests[0]["messages"]] == ["s", "first"]
    assert [m["content"] for m in model.requests[1]["messages"]] == ["s", "edited", "more"]


def test_a_step_function_cannot_edit_the_run_in_place():
    def meddle(messages: list[dict]) -> dict:
        messages[1]["content"] = "rewritten by the step"
        return say("ok")

    model = ScriptedModel([meddle])
    result = Agent(model).run("the real task")
    assert result.messages[1]["content"] == "the real task"
    assert model.requests[0]["messages"][1]["content"] == "the real task"


def test_an_observer_cannot_edit_the_transcript_through_an_event():
    def meddle(event) -> None:
        if event.type == "model_reply":
            event.message["content"] = "rewritten by an observer"

    result = Agent(ScriptedModel([say("the answer")]), observers=[meddle]).run("go")
    assert result.messages[-1]["content"] == "the answer"


def test_a_step_function_with_two_parameters_gets_the_requests_tools_and_tool_choice():
    seen = []

    def look(messages: list[dict], info: RequestInfo) -> dict:
        seen.append(([t["function"]["name"] for t in info.tools], info.tool_choice))
        return say("done")

    Agent(ScriptedModel([tool_call("todo_write", todos=[]), look]), [add],
          planning=True).run("go", plan_first=True)
    assert seen == [(["add", "todo_write"], "auto")]


def test_builders_write_the_wire_format():
    assert tool_call("add", a=1, b=2) == {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]}
    assert tool_call("add", '{"a": 1', id="c9")["tool_calls"][0] == {
        "id": "c9", "type": "function", "function": {"name": "add", "arguments": '{"a": 1'}}
    assert tool_call("add", {"a": 1})["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    assert say("hi") == {"role": "assistant", "content": "hi"}
    both = parallel(say("Looking."), tool_call("add", a=1, b=1), tool_call("add", a=2, b=2))
    assert both["content"] == "Looking."
    assert [c["function"]["arguments"] for c in both["tool_calls"]] == ['{"a": 1, "b": 1}',
                                                                       '{"a": 2, "b": 2}']
    with pytest.raises(TypeError, match="not both"):
        tool_call("add", {"a": 1}, b=2)


def test_calls_built_without_ids_are_numbered_by_request_and_run():
    model = ScriptedModel([parallel(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2)),
                           say("4")])
    result = Agent(model, [add]).run("go")
    assert [m["tool_call_id"] for m in result.messages if m["role"] == "tool"] == [
        "call_1_0", "call_1_1"]


# -- streaming a scripted reply (issue 10) -----------------------------------------------

def streamed_deltas(model: ScriptedModel, tools=(), **run) -> tuple[list, object]:
    seen = []
    agent = Agent(model, list(tools), observers=[
        lambda e: seen.append((e.kind, e.text)) if e.type == "model_delta" else None])
    return seen, agent.run("go", **run)


def test_a_scripted_model_does_not_stream_unless_asked():
    seen, result = streamed_deltas(ScriptedModel([say("Hello there")]))
    assert (seen, result.final) == ([], "Hello there")


def test_a_streamed_scripted_reply_arrives_word_by_word_and_ends_the_same():
    seen, result = streamed_deltas(ScriptedModel([say("The sum is 5.")], stream=True))
    assert seen == [("text", "The "), ("text", "sum "), ("text", "is "), ("text", "5.")]
    assert result.final == "The sum is 5."
    assert not [e for e in result.events if e.type == "model_delta"]


def test_streamed_reasoning_and_call_arguments_come_before_the_call_runs():
    model = ScriptedModel([{**tool_call("add", a=2, b=3), "reasoning_content": "Add them."},
                           say("5")], stream=True)
    seen, result = streamed_deltas(model, [add])
    reasoning = "".join(text for kind, text in seen if kind == "reasoning")
    arguments = "".join(text for kind, text in seen if kind == "tool_call")
    assert (reasoning, arguments) == ("Add them.", '{"a": 2, "b": 3}')
    assert result.messages[2]["reasoning_content"] == "Add them."
    assert result.final == "5"


def test_a_delay_spaces_the_pieces_out():

    started = time.monotonic()
    seen, _ = streamed_deltas(ScriptedModel([say("one two three four")], stream=True,
                                            delay=0.05, words=2))
    assert seen == [("text", "one two "), ("text", "three four")]
    assert time.monotonic() - started >= 0.1


def test_a_run_cancelled_mid_stream_keeps_what_arrived_in_partial():

    cancel = threading.Event()
    model = ScriptedModel([say("alpha beta gamma delta epsilon")], stream=True, delay=0.05)
    threading.Timer(0.12, cancel.set).start()
    _, result = streamed_deltas(model, cancel=cancel)
    assert result.outcome == "cancelled"
    time.sleep(0.1)  # the model notices at its next piece
    assert model.partial is not None and model.partial.content in (
        "alpha beta ", "alpha beta gamma ", "alpha beta gamma delta ")


def test_a_step_may_say_its_finish_reason_and_a_replay_keeps_it():
    model = ScriptedModel([{**say("The list is: one, two,"), "finish_reason": "length"}])
    result = Agent(model).run("List")
    replayed = Agent(ScriptedModel.from_run(result)).run("List")
    assert (result.outcome, replayed.outcome) == ("truncated", "truncated")
    assert [e.finish_reason for e in result.events if e.type == "model_reply"] == ["length"]


def test_a_reply_without_a_finish_reason_ends_as_a_server_would():
    result = Agent(ScriptedModel([tool_call("add", a=1, b=2), say("3")]), [add]).run("1+2")
    assert [e.finish_reason for e in result.events if e.type == "model_reply"] == [
        "tool_calls", "stop"]


def test_a_negative_delay_is_refused():
    with pytest.raises(ValueError, match="delay"):
        ScriptedModel([say("hi")], stream=True, delay=-1)


def test_a_replay_can_stream_the_recorded_replies_slowly():

    recorded = Agent(ScriptedModel([tool_call("add", a=2, b=3), say("It is 5.")]), [add]).run(
        "2 + 3?")
    seen, started = [], time.monotonic()
    replay = Agent(ScriptedModel.from_run(recorded, stream=True, delay=0.02), [add],
                   observers=[lambda e: seen.append(e.text) if e.type == "model_delta" else None]
                   ).run("2 + 3?")
    assert (replay.outcome, replay.final) == ("completed", "It is 5.")
    assert "".join(seen) == '{"a": 2, "b": 3}It is 5.'
    assert time.monotonic() - started >= 0.02 * len(seen)


def test_a_step_whose_tool_call_is_not_a_dict_ends_the_run_saying_how_to_write_one():
    result = Agent(ScriptedModel([{"role": "assistant", "tool_calls": ["add"]}])).run("go")
    assert result.outcome == "model_error"
    assert "each tool call must be a dict" in result.error
    assert "tool_call(name, ...)" in result.error
