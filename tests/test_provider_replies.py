"""What real providers send, through `OpenAIModel` over HTTP: reasoning that must go back,
content parts, ``<think>``, usage details, ``finish_reason`` and refusals.

Each test runs whole and streamed (``stream`` is a fixture): the same reply must end
up the same either way.
"""

from __future__ import annotations

import pytest

from harness import Agent, OpenAIModel, tool
from harness.live.wire import parse_reply
from tests.fake_openai import FakeOpenAI, reply
from tests.provider_rules import deepseek_problems, deepseek_thinking

pytest_plugins = ("tests.fake_openai",)

KEY = "sk-test-providers-0123456789"
ADD = {"id": "call_add", "type": "function",
       "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(params=[False, True], ids=["whole", "streamed"])
def stream(request: pytest.FixtureRequest) -> bool:
    return request.param


def model_for(server: FakeOpenAI, stream: bool, **settings: object) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0,
                       settings={"stream": stream, **settings})


def test_deepseek_reasoning_content_goes_back_on_the_tool_call_turn(stream: bool) -> None:
    with FakeOpenAI(rules=[deepseek_thinking()]) as server:
        server.add(reply({"reasoning_content": "I should add them.", "tool_calls": [ADD]}),
                   reply({"reasoning_content": "5 it is.", "content": "2 + 3 = 5"}))
        result = Agent(model_for(server, stream), [add]).run("What is 2 + 3?")
        second = server.bodies[1]

    assert (result.outcome, result.final) == ("completed", "2 + 3 = 5")
    assert second["messages"][2]["reasoning_content"] == "I should add them."
    assert result.messages[2]["reasoning_content"] == "I should add them."
    assert deepseek_problems(second) == []


def test_without_the_echo_deepseek_refuses_the_second_request() -> None:
    """The rule the fake enforces is the one a live DeepSeek enforces: it bites."""
    with FakeOpenAI(rules=[deepseek_thinking()]) as server:
        server.add(reply(content="unused"))
        model = model_for(server, False)
        messages = [{"role": "user", "content": "2+3?"},
                    {"role": "assistant", "content": None, "tool_calls": [ADD]},
                    {"role": "tool", "tool_call_id": "call_add", "content": "5"}]
        with pytest.raises(Exception, match="reasoning_content in the thinking mode"):
            model.complete(messages, [add.schema()], "auto")


def test_content_parts_give_the_text_as_answer_and_thinking_as_reasoning(stream: bool) -> None:
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "2 and 2 make 4."}]},
             {"type": "text", "text": "4"}]
    with FakeOpenAI([reply({"content": parts})]) as server:
        model = model_for(server, stream)
        result = Agent(model).run("What is 2 + 2?")
        direct = parse_reply({"content": parts})

    assert result.final == "4"
    assert result.messages[-1] == {"role": "assistant", "content": "4"}  # nothing else back
    assert direct.reasoning == "2 and 2 make 4."


def test_a_think_block_stays_out_of_the_answer_and_becomes_reasoning(stream: bool) -> None:
    text = "<think>\nThe user wants a greeting.\n</think>\n\nHello!"
    with FakeOpenAI([reply(content=text)]) as server:
        result = Agent(model_for(server, stream)).run("Say hello")

    assert result.final == "Hello!"
    assert "<think>" not in result.messages[-1]["content"]
    assert parse_reply({"content": text}).reasoning == "The user wants a greeting."


@pytest.mark.parametrize(("text", "answer", "reasoning"), [
    ("<think>a</think>b", "b", "a"),
    ("plan it</think>The answer.", "The answer.", "plan it"),  # the template opened it
    ("<think>cut off while thinking", "cut off while thinking", None),  # kept as the answer
    ("Use <think> tags in HTML? No.", "Use <think> tags in HTML? No.", None),
])
def test_think_blocks_are_split_only_where_a_model_puts_them(text, answer, reasoning) -> None:
    parsed = parse_reply({"content": text})
    assert (parsed.content, parsed.reasoning) == (answer, reasoning)


def test_usage_keeps_the_provider_total_and_its_cached_and_reasoning_counts(
        stream: bool) -> None:
    usage = {"prompt_tokens": 35, "completion_tokens": 12, "total_tokens": 109,
             "prompt_tokens_details": {"cached_tokens": 20},
             "completion_tokens_details": {"reasoning_tokens": 62}}
    with FakeOpenAI([reply({"tool_calls": [ADD]}, usage=usage),
                     reply(content="5", usage={**usage, "total_tokens": 100})]) as server:
        result = Agent(model_for(server, stream), [add]).run("2 + 3?")

    assert result.usage == {"prompt_tokens": 70, "completion_tokens": 24, "total_tokens": 209,
                            "cached_tokens": 40, "reasoning_tokens": 124, "estimated": False}


def test_deepseek_cache_hits_count_as_cached_tokens() -> None:
    parsed = parse_reply({"content": "hi"}, {"prompt_tokens": 10, "completion_tokens": 1,
                                             "prompt_cache_hit_tokens": 8})
    assert parsed.usage == {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11,
                            "cached_tokens": 8, "estimated": False}


def test_an_answer_cut_off_by_max_tokens_ends_truncated_with_its_text(stream: bool) -> None:
    with FakeOpenAI([reply(content="The three steps are: first,",
                           finish_reason="length")]) as server:
        result = Agent(model_for(server, stream, max_tokens=8)).run("List three steps")
        sent = server.bodies[0]

    assert (result.outcome, result.final) == ("truncated", "The three steps are: first,")
    assert [e.finish_reason for e in result.events if e.type == "model_reply"] == ["length"]
    assert sent["max_tokens"] == 8


def test_a_refusal_is_marked_and_ends_the_run_refused(stream: bool) -> None:
    refusal = "I'm very sorry, but I can't assist with that."
    with FakeOpenAI([reply({"content": None, "refusal": refusal})]) as server:
        result = Agent(model_for(server, stream)).run("Something harmful")

    assert (result.outcome, result.final) == ("refused", refusal)
    assert result.messages[-1]["refusal"] == refusal


def test_tool_calls_keep_a_providers_own_fields_and_drop_the_stream_index(
        stream: bool) -> None:
    call = {**ADD, "index": 0, "extra_content": {"google": {"thought_signature": "c2ln"}}}
    with FakeOpenAI([reply({"tool_calls": [call]}), reply(content="5")]) as server:
        result = Agent(model_for(server, stream), [add]).run("2 + 3?")
        sent_back = server.bodies[1]["messages"][2]["tool_calls"][0]

    assert sent_back == {**ADD, "extra_content": {"google": {"thought_signature": "c2ln"}}}
    assert result.outcome == "completed"
