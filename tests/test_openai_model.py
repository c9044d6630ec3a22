"""`OpenAIModel` through the real ``openai`` SDK and real HTTP, against a local fake server.

Nothing of the SDK is mocked: each test queues answers on `tests.fake_openai`, runs
the model (or a whole `Agent`), and reads what the server received.
"""

from __future__ import annotations

import json
import time

import pytest

from harness import Agent, OpenAIModel, tool
from harness.models import ModelError
from tests.fake_openai import (
    FakeOpenAI,
    choice_without_message,
    dropped,
    invalid_json,
    no_choices,
    rate_limited,
    reply,
    server_error,
    slow,
    unauthorized,
)

pytest_plugins = ("tests.fake_openai",)  # the `fake_openai` fixture

KEY = "sk-test-SECRET-0123456789"
USER = [{"role": "user", "content": "What is 2 + 3?"}]
ADD_CALL = {"id": "call_add_1", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets exactly the provider variables it is about."""
    for name in ("HARNESS_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def model_for(server: FakeOpenAI, **client_kwargs: object) -> OpenAIModel:
    return OpenAIModel(model="fake-model", base_url=server.base_url, api_key=KEY, **client_kwargs)


def test_reply_with_tool_calls_parses_to_wire_format_with_server_usage(
    fake_openai: FakeOpenAI,
) -> None:
    usage = {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51}
    fake_openai.add(reply(content=None, tool_calls=[ADD_CALL], usage=usage))

    result = model_for(fake_openai).complete(USER, [add.schema()], "auto")

    assert result.content is None
    assert result.tool_calls == [ADD_CALL]
    assert result.usage == {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51,
                            "estimated": False}


def test_agent_run_sends_tools_and_answers_the_call_with_its_id(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.add(reply(tool_calls=[ADD_CALL]), reply(content="2 + 3 = 5"))

    result = Agent(model_for(fake_openai), [add]).run("What is 2 + 3?")

    assert (result.outcome, result.final) == ("completed", "2 + 3 = 5")
    first, second = fake_openai.bodies
    assert first["model"] == "fake-model"
    assert [t["function"]["name"] for t in first["tools"]] == ["add"]
    assert first["tool_choice"] == "auto"
    assert second["messages"][-2]["tool_calls"] == [ADD_CALL]
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_add_1", "content": "5"}


def test_tool_calls_without_ids_get_ids_unique_across_the_run(fake_openai: FakeOpenAI) -> None:
    no_id = {"type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    fake_openai.add(reply(tool_calls=[no_id]), reply(tool_calls=[no_id]), reply(content="5"))

    result = Agent(model_for(fake_openai), [add]).run("What is 2 + 3, twice?")

    outcomes = [(e.call_id, e.ok) for e in result.events if e.type == "tool_result"]
    assert result.outcome == "completed"
    assert [ok for _, ok in outcomes] == [True, True]
    assert outcomes[0][0] != outcomes[1][0]


def test_request_without_tools_sends_neither_tools_nor_tool_choice(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.add(reply(content="Hello"))

    Agent(model_for(fake_openai)).run("Say hello")

    (body,) = fake_openai.bodies
    assert "tools" not in body
    assert "tool_choice" not in body


@pytest.mark.parametrize("fault", [server_error(500), server_error(503), rate_limited()],
                         ids=["500", "503", "429"])
def test_transient_error_is_retried_by_the_sdk_and_the_run_completes(
    fake_openai: FakeOpenAI, fault: object,
) -> None:
    fake_openai.add(fault, reply(content="Recovered"))

    result = Agent(model_for(fake_openai, max_retries=2)).run("Hi")

    assert (result.outcome, result.final) == ("completed", "Recovered")
    assert len(fake_openai.requests) == 2


def test_persistent_401_ends_model_error_keeping_transcript_and_hiding_the_key(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.add(*[unauthorized(f"Incorrect API key provided: {KEY}.")] * 3)
    model = model_for(fake_openai, max_retries=2)

    result = Agent(model, [add]).run("What is 2 + 3?")

    assert result.outcome == "model_error"
    assert [m["role"] for m in result.messages] == ["system", "user"]
    assert "401" in result.error and "AuthenticationError" in result.error
    assert len(fake_openai.requests) == 1  # a 401 is not retried
    for text in (result.error, str(result.events), json.dumps(result.to_dict()), repr(model)):
        assert KEY not in text


def test_environment_variables_choose_model_server_and_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake_openai.add(reply(content="Hi"))

    OpenAIModel().complete(USER, [])

    (request,) = fake_openai.requests
    assert request.body["model"] == "env-model"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_keyless_local_server_needs_no_api_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(content="Hi from a local model"))

    reply_ = OpenAIModel(model="llama3", base_url=fake_openai.base_url).complete(USER, [])

    assert reply_.content == "Hi from a local model"
    assert KEY not in fake_openai.requests[0].headers["authorization"]


def test_missing_model_name_raises_naming_harness_model() -> None:
    with pytest.raises(ValueError, match="HARNESS_MODEL"):
        OpenAIModel(base_url="http://127.0.0.1:9/v1", api_key=KEY)


def test_no_key_and_no_base_url_raises_naming_openai_api_key() -> None:
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIModel(model="gpt-4o-mini")


def test_client_kwargs_reach_the_sdk_so_a_slow_server_times_out(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.add(slow(5.0))
    started = time.monotonic()

    result = Agent(model_for(fake_openai, timeout=0.3, max_retries=0)).run("Hi")

    assert result.outcome == "model_error"
    assert "Timeout" in result.error
    assert time.monotonic() - started < 2.0
    assert len(fake_openai.requests) == 1  # max_retries=0 reached the SDK too


@pytest.mark.parametrize("fault", [no_choices(), choice_without_message()],
                         ids=["empty choices", "choice without message"])
def test_reply_without_a_message_ends_model_error(fake_openai: FakeOpenAI, fault: object) -> None:
    fake_openai.add(fault)

    result = Agent(model_for(fake_openai)).run("Hi")

    assert result.outcome == "model_error"
    assert "no choice with a message" in result.error


def test_reply_that_is_not_json_ends_model_error_from_the_model(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(invalid_json())

    with pytest.raises(ModelError, match="could not be read"):
        model_for(fake_openai).complete(USER, [])


def test_dropped_connection_ends_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(dropped())

    result = Agent(model_for(fake_openai, max_retries=0)).run("Hi")

    assert result.outcome == "model_error"
    assert "APIConnectionError" in result.error


def test_server_usage_is_reported_not_estimated_and_summed_into_the_result(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.add(
        reply(tool_calls=[ADD_CALL],
              usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}),
        reply(content="5",
              usage={"prompt_tokens": 130, "completion_tokens": 3, "total_tokens": 133}),
    )

    result = Agent(model_for(fake_openai), [add]).run("What is 2 + 3?")

    replies = [e.usage for e in result.events if e.type == "model_reply"]
    assert [u["estimated"] for u in replies] == [False, False]
    assert result.usage == {"prompt_tokens": 230, "completion_tokens": 23, "total_tokens": 253,
                            "estimated": False}


def test_server_without_usage_gets_an_estimate_labelled_as_such(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(content="Hello there", usage=None))

    usage = model_for(fake_openai).complete(USER, []).usage

    assert usage["estimated"] is True
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
