"""Request settings for `OpenAIModel`: as an argument, from HARNESS_MODEL_SETTINGS, and the
system prompt's role. Every test reads the request body the local server received."""

from __future__ import annotations

import json

import pytest

from harness import Agent, OpenAIModel, tool
from harness.live.openai_model import PROVIDER_VARIABLES
from tests.fake_openai import FakeOpenAI, reply
from tests.provider_rules import deepseek_thinking, refuses_system_role

pytest_plugins = ("tests.fake_openai",)

KEY = "sk-test-settings-0123456789"
FORCED = {"type": "function", "function": {"name": "todo_write"}}
PLAN = {"id": "p1", "type": "function", "function": {
    "name": "todo_write", "arguments": '{"todos": [{"content": "Greet", "status": "completed"}]}'}}


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def model_for(server: FakeOpenAI, **kwargs: object) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0, **kwargs)


def test_request_settings_given_as_an_argument_go_into_every_request(
        fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(content="Hi"))
    settings = {"temperature": 0, "max_completion_tokens": 300, "reasoning_effort": "low",
                "extra_body": {"top_k": 20}}

    Agent(model_for(fake_openai, settings=settings)).run("Hi")

    body = fake_openai.bodies[0]
    assert (body["temperature"], body["max_completion_tokens"], body["reasoning_effort"],
            body["top_k"]) == (0, 300, "low", 20)


def test_deepseek_thinking_switched_off_from_the_environment_without_code(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_MODEL_SETTINGS",
                       json.dumps({"extra_body": {"thinking": {"type": "disabled"}}}))
    with FakeOpenAI([reply({"tool_calls": [PLAN]}), reply(content="Hello!")],
                    rules=[deepseek_thinking()]) as server:
        model = model_for(server)
        result = Agent(model, planning=True).run("Greet me", plan_first=True)

    assert result.outcome == "completed"
    assert [b["thinking"] for b in server.bodies] == [{"type": "disabled"}] * 2
    assert server.bodies[0]["tool_choice"] == FORCED  # thinking off: a named choice is fine
    assert not [e for e in result.events if e.type == "tool_choice_fallback"]


def test_an_argument_wins_over_the_environment_key_by_key(
        monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> None:
    monkeypatch.setenv("HARNESS_MODEL_SETTINGS", '{"temperature": 1, "max_tokens": 50}')
    fake_openai.add(reply(content="Hi"))

    model_for(fake_openai, settings={"temperature": 0}).complete(
        [{"role": "user", "content": "Hi"}], [])

    body = fake_openai.bodies[0]
    assert (body["temperature"], body["max_tokens"]) == (0, 50)


@pytest.mark.parametrize(("value", "message"), [
    ("{temperature: 0}", "HARNESS_MODEL_SETTINGS is not valid JSON"),
    ("[1, 2]", "HARNESS_MODEL_SETTINGS must hold a JSON object"),
    ('{"messages": []}', "may not set \\['messages'\\]"),
    ('{"temprature": 0}', "unknown request setting.*extra_body"),
    ('{"system_role": "root"}', "system_role must be one of"),
])
def test_a_bad_setting_is_refused_when_the_model_is_made_saying_the_fix(
        monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    monkeypatch.setenv("HARNESS_MODEL_SETTINGS", value)
    with pytest.raises(ValueError, match=message):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1")


def test_the_settings_variable_is_a_provider_variable_tests_remove() -> None:
    assert "HARNESS_MODEL_SETTINGS" in PROVIDER_VARIABLES


@pytest.mark.parametrize(("role", "first"), [
    ("system", {"role": "system", "content": "Be brief."}),
    ("developer", {"role": "developer", "content": "Be brief."}),
    ("user", {"role": "user", "content": "Be brief.\n\nSay hi"}),
])
def test_the_system_prompt_goes_out_in_the_configured_role(
        fake_openai: FakeOpenAI, role: str, first: dict) -> None:
    fake_openai.add(reply(content="Hi"))

    result = Agent(model_for(fake_openai, settings={"system_role": role}),
                   system="Be brief.").run("Say hi")

    assert fake_openai.bodies[0]["messages"][0] == first
    assert result.messages[0] == {"role": "system", "content": "Be brief."}  # the transcript


def test_a_model_that_refuses_the_system_role_works_with_it_folded_in() -> None:
    with FakeOpenAI([reply(content="Hi")], rules=[refuses_system_role()]) as server:
        refused = Agent(model_for(server)).run("Say hi")
        folded = Agent(model_for(server, settings={"system_role": "user"})).run("Say hi")

    assert refused.outcome == "model_error" and "'system'" in refused.error
    assert (folded.outcome, folded.final) == ("completed", "Hi")


def test_streaming_is_the_default_and_can_be_switched_off(fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(content="a"), reply(content="b"))

    model_for(fake_openai).complete([{"role": "user", "content": "Hi"}], [])
    model_for(fake_openai, settings={"stream": False}).complete(
        [{"role": "user", "content": "Hi"}], [])

    streamed, whole = fake_openai.bodies
    assert (streamed["stream"], streamed["stream_options"]) == (True, {"include_usage": True})
    assert "stream" not in whole and "stream_options" not in whole


def test_the_positional_constructor_and_client_keywords_still_work(
        fake_openai: FakeOpenAI) -> None:
    fake_openai.add(reply(content="Hi"))

    model = OpenAIModel("m", fake_openai.base_url, KEY, timeout=5, max_retries=0)
    answer = model.complete([{"role": "user", "content": "Hi"}], []).content

    assert (answer, model.client.max_retries, model.client.timeout) == ("Hi", 0, 5)


def test_the_context_window_is_the_panels_and_never_sent(fake_openai: FakeOpenAI,
                                                        monkeypatch) -> None:
    from harness.ui.panel import PanelState

    fake_openai.add(reply(content="Hi", usage={"prompt_tokens": 32_000, "completion_tokens": 5}))
    monkeypatch.setenv("HARNESS_MODEL_SETTINGS", '{"context_window": 128000}')
    state = PanelState()
    Agent(model_for(fake_openai), observers=[state]).run("Hi")

    assert "context_window" not in json.dumps(fake_openai.bodies[0])
    assert "Context: 32,000 tokens of 128,000 (25%), last request (main)" in state.text()
    for wrong in (0, "128k", 12.5, True):
        with pytest.raises(ValueError, match="context_window must be a whole number"):
            model_for(fake_openai, settings={"context_window": wrong})
