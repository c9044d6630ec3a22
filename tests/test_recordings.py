"""Real provider traffic, replayed: each reply parses as the provider meant it, and each
request the harness sends back is one that provider's documented rules accept.

The recordings (tests/fixtures/recordings, see NOTICE.md there) are served in order by
the local fake server, bodies byte for byte, streamed ones as the server-sent events
that were recorded. A whole conversation runs through `Agent.run` with stand-in tools
that return what the recording's next request carried; a single tool-calling reply
goes through `OpenAIModel.complete`. The expectations below were read off each file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from harness import Agent, OpenAIModel, Tool
from tests.fake_openai import FakeOpenAI, Scripted
from tests.provider_rules import deepseek_problems, openai_problems

pytest_plugins = ("tests.fake_openai",)

RECORDINGS = Path(__file__).parent / "fixtures" / "recordings"


@dataclass(frozen=True)
class Expected:
    """What the provider meant, read off the recording by hand."""

    final: str | None  # the answer's first characters (None: no answer)
    outcome: str = "completed"
    calls: list[list[str]] = field(default_factory=list)  # tool names, per reply
    finish: list[str] = field(default_factory=lambda: ["stop"])
    usage: dict[str, int] = field(default_factory=dict)  # summed over the replies
    reasoning: str | None = None  # the first reply's reasoning starts so
    echoed: tuple[str, ...] = ()  # provider fields kept on the transcript message
    settings: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


RUNS = {
    "deepseek_thinking_tool_calls": Expected(
        "🎉 **Congratulations, Anne!**", calls=[["load_capability"],
                                              ["get_player_name", "roll_dice"], []],
        finish=["tool_calls", "tool_calls", "stop"],
        usage={"prompt_tokens": 2414, "completion_tokens": 256, "total_tokens": 2670,
               "cached_tokens": 1408, "reasoning_tokens": 111},
        reasoning="The user wants to play a dice game", echoed=("reasoning_content",)),
    "deepseek_reasoner_answer": Expected(
        "Crossing the street safely involves", usage={"total_tokens": 801,
                                                     "reasoning_tokens": 415},
        reasoning="Okay, the user is asking how to cross", echoed=("reasoning_content",)),
    "deepseek_reasoner_stream": Expected(
        "Hello there! 😊 How can I help you today?", usage={"total_tokens": 218,
                                                    "reasoning_tokens": 198},
        reasoning='Hmm, the user just said "Hello".', echoed=("reasoning_content",),
        settings={"stream": True}),
    "mistral_thinking_parts": Expected(
        "Crossing a river", usage={"total_tokens": 1411},
        reasoning="**Analogizing crossing a river**"),
    "mistral_small_thinking_high": Expected(
        "4", usage={"total_tokens": 63, "cached_tokens": 0},
        reasoning="The user is asking for the result of 2+2."),
    "cerebras_reasoning_field": Expected(
        "The capital of France is **Paris**.", usage={"total_tokens": 110},
        reasoning="User asks simple question", echoed=("reasoning",)),
    "ollama_reasoning_field": Expected(
        "Paris.", usage={"total_tokens": 256}, reasoning="We need to answer question",
        echoed=("reasoning",)),
    "gemini_call_without_id": Expected(  # an empty id, and a total above prompt + completion
        "The current time is Noon.", calls=[["get_current_time"], []],
        finish=["tool_calls", "stop"],
        usage={"prompt_tokens": 101, "completion_tokens": 18, "total_tokens": 209},
        echoed=("extra_content",)),
    "openai_stream_tool_call": Expected(
        "The capital of the UK is London.", calls=[["get_capital"], []],
        finish=["tool_calls", "stop"], usage={"total_tokens": 155, "reasoning_tokens": 0},
        settings={"stream": True}),
    "openai_stream_answer": Expected("Paris.", usage={"total_tokens": 24},
                                     settings={"stream": True}),
    "openai_o1_system_as_user": Expected(
        "The capital of France is **Paris**.", usage={"total_tokens": 242,
                                                     "reasoning_tokens": 192},
        settings={"system_role": "user"}),
    "cerebras_tool_call": Expected("The capital of France is Paris.",
                                   usage={"total_tokens": 329}),
    "openai_refusal": Expected("I'm very sorry, but I can't assist with that.",
                               outcome="refused", usage={"total_tokens": 91}),
    "openai_length": Expected('{"', outcome="truncated", finish=["length"],
                              usage={"total_tokens": 80}),
    "openai_three_choices": Expected('{"city":"San Francisco","temperature":64',
                                     usage={"total_tokens": 123}),
    "openai_o1_refuses_system_role": Expected(
        None, outcome="model_error", finish=[],
        error="'messages[0].role' does not support 'system' with this model"),
}

REPLIES = {  # one tool-calling reply: (tool_choice sent, the calls as (name, arguments))
    "groq_named_tool_choice": ({"type": "function", "function": {"name": "get_weather"}},
                               [("get_weather", {"city": "Paris"})], 786),
    "groq_required_tool_choice": ("required", [("get_weather", {"city": "Paris"})], None),
    "openai_parallel_tool_calls": ("auto", [
        ("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
        ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"})], 209),
}


def load(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))


def served(interaction: dict) -> Scripted:
    """The recorded response, as it went over the wire."""
    response = interaction["response"]
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    kind = (headers.get("content-type") or ["application/json"])[0]
    if "parsed_body" in response:
        body = json.dumps(response["parsed_body"]).encode()
    else:
        body = response["body"]["string"].encode()
    return Scripted(status=response["status"]["code"], body=body,
                    headers={"Content-Type": kind})


class AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


def stand_in_tools(recording: dict) -> list[Tool]:
    """Every tool the recording offered, answering what the next request carried."""
    outputs: dict[str, list[str]] = {}
    schemas: dict[str, str] = {}
    for interaction in recording["interactions"]:
        body = interaction["request"].get("parsed_body") or {}
        for schema in body.get("tools") or ():
            schemas.setdefault(schema["function"]["name"],
                               schema["function"].get("description") or "A tool.")
        names = {c["id"]: c["function"]["name"] for m in body.get("messages") or ()
                 for c in m.get("tool_calls") or ()}
        for m in body.get("messages") or ():
            if m.get("role") == "tool" and m["tool_call_id"] in names:
                outputs.setdefault(names[m["tool_call_id"]], []).append(m["content"])

    def answer(name: str) -> Any:
        given = iter(dict.fromkeys(outputs.get(name, ["done"])))
        return lambda **_: next(given, "done")

    return [Tool(name, text, AnyArguments, answer(name)) for name, text in schemas.items()]


def task_of(recording: dict) -> tuple[str | None, str]:
    messages = recording["interactions"][0]["request"]["parsed_body"]["messages"]
    system = "\n".join(m["content"] for m in messages if m["role"] == "system") or None
    return system, next(m["content"] for m in messages if m["role"] == "user")


def problems(recording: dict, body: dict) -> list[str]:
    """What the recorded provider's documented rules refuse in a request we sent."""
    host = recording["interactions"][0]["request"].get("uri", "")
    return deepseek_problems(body) if "deepseek" in host else openai_problems(body)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_recorded_conversation_replays_as_the_provider_meant(name: str) -> None:
    recording, expected = load(name), RUNS[name]
    system, task = task_of(recording)
    with FakeOpenAI([served(i) for i in recording["interactions"]]) as server:
        model = OpenAIModel("recorded", base_url=server.base_url, api_key="sk-test-replay",
                            max_retries=0, settings={"stream": False, **expected.settings})
        result = Agent(model, stand_in_tools(recording), system=system).run(task)
        bodies = server.bodies

    replies = [e for e in result.events if e.type == "model_reply"]
    assert (result.outcome, result.error and expected.error in result.error) == (
        expected.outcome, result.error and bool(expected.error))
    assert (result.final or "")[:len(expected.final or "")] == (expected.final or "")
    assert [[c["function"]["name"] for c in e.message.get("tool_calls") or ()]
            for e in replies] == (expected.calls or [[] for _ in replies])
    assert [e.finish_reason for e in replies] == expected.finish
    assert {key: result.usage.get(key) for key in expected.usage} == expected.usage
    assert not any(e.usage["estimated"] for e in replies)  # the provider's own counts
    assistant = [m for m in result.messages if m["role"] == "assistant"]
    assert all(isinstance(m["content"], str) or m["content"] is None for m in assistant)
    for key in expected.echoed:  # what the provider needs back is on its own message
        assert all(key in m for m in assistant), key
    assert [problems(recording, body) for body in bodies] == [[] for _ in bodies]
    if expected.reasoning:
        first = assistant[0]
        shown = first.get("reasoning_content") or first.get("reasoning") or ""
        assert (shown or reasoning_of(model, name)).startswith(expected.reasoning)


def reasoning_of(model: OpenAIModel, name: str) -> str:
    """Reasoning that is not sent back (content parts): read it from a fresh parse."""
    from harness.live.wire import parse_reply

    recording = load(name)
    message = recording["interactions"][0]["response"]["parsed_body"]["choices"][0]["message"]
    return parse_reply(message).reasoning or ""


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_recorded_tool_calling_reply_parses_to_its_calls(name: str) -> None:
    recording = load(name)
    choice, calls, total = REPLIES[name]
    body = recording["interactions"][0]["request"]["parsed_body"]
    with FakeOpenAI([served(i) for i in recording["interactions"]]) as server:
        model = OpenAIModel("recorded", base_url=server.base_url, api_key="sk-test-replay",
                            max_retries=0, settings={"stream": False})
        reply = model.complete(body["messages"], body.get("tools") or [], choice)
        sent = server.bodies[0]

    assert [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in reply.tool_calls] == calls
    assert all(c["id"] and c["type"] == "function" for c in reply.tool_calls)
    assert reply.finish_reason == "tool_calls"
    assert total is None or reply.usage["total_tokens"] == total
    assert sent.get("tool_choice") == (choice if body.get("tools") else None)


def test_a_whole_reply_to_a_streamed_request_is_read_all_the_same() -> None:
    recording = load("deepseek_reasoner_answer")  # a server that ignores stream=True
    with FakeOpenAI([served(i) for i in recording["interactions"]]) as server:
        model = OpenAIModel("recorded", base_url=server.base_url, api_key="sk-test-replay")
        result = Agent(model).run("How do I cross the street?")

    assert server.bodies[0]["stream"] is True
    assert result.outcome == "completed"
    assert result.final.startswith("Crossing the street safely involves")
    assert result.usage["reasoning_tokens"] == 415
