"""A server that refuses a forced ``tool_choice``: one retry, a weaker choice, remembered.

    named  --400-->  "required"  --400-->  "auto" + a reminder (sent, not kept)

Each test runs a planning agent with ``plan_first=True`` (its first request forces
`todo_write`) against a local server that refuses what a real host refuses.
"""

from __future__ import annotations

import pytest

from harness import Agent, OpenAIModel
from harness.ui.panel import PanelState
from tests.fake_openai import FakeOpenAI, http_error, reply
from tests.provider_rules import deepseek_problems, deepseek_thinking, refuses_tool_choice

pytest_plugins = ("tests.fake_openai",)

FORCED = {"type": "function", "function": {"name": "todo_write"}}
PLAN = {"id": "p1", "type": "function", "function": {
    "name": "todo_write", "arguments": '{"todos": [{"content": "Greet", "status": "completed"}]}'}}


def planning_run(server: FakeOpenAI, model: OpenAIModel | None = None, **kwargs: object):
    model = model or OpenAIModel("m", base_url=server.base_url, api_key="sk-test-choice",
                                 max_retries=0)
    return Agent(model, planning=True, **kwargs).run("Greet me", plan_first=True), model


def choices(server: FakeOpenAI) -> list:
    return [body.get("tool_choice") for body in server.bodies]


def fallbacks(result) -> list[tuple]:
    return [(e.requested, e.sent, e.reminder) for e in result.events
            if e.type == "tool_choice_fallback"]


def test_a_refused_named_choice_is_retried_once_with_required() -> None:
    with FakeOpenAI([reply({"tool_calls": [PLAN]}), reply(content="Hello!")],
                    rules=[refuses_tool_choice("named")]) as server:
        result, model = planning_run(server)

    assert result.outcome == "completed"
    assert choices(server) == [FORCED, "required", "auto"]
    assert fallbacks(result) == [(FORCED, "required", None)]
    assert model.forced_tool_choice == "required"


def test_the_model_remembers_what_works_and_sends_it_straight_away() -> None:
    with FakeOpenAI([reply({"tool_calls": [PLAN]}), reply(content="Hello!")] * 2,
                    rules=[refuses_tool_choice("named")]) as server:
        _, model = planning_run(server)
        second, _ = planning_run(server, model)

    assert choices(server) == [FORCED, "required", "auto", "required", "auto"]
    [event] = [e for e in second.events if e.type == "tool_choice_fallback"]
    assert (event.sent, event.reason) == ("required", "refused earlier with this model object")


def test_when_required_is_refused_too_auto_goes_out_with_a_reminder_that_is_not_kept() -> None:
    with FakeOpenAI([reply({"tool_calls": [PLAN]}), reply(content="Hello!")],
                    rules=[refuses_tool_choice("named", "required")]) as server:
        result, model = planning_run(server)
        sent = server.bodies[2]

    reminder = "<reminder>Call the todo_write tool now, before anything else.</reminder>"
    assert choices(server) == [FORCED, "required", "auto", "auto"]
    assert sent["messages"][-1] == {"role": "user", "content": reminder}
    assert fallbacks(result) == [(FORCED, "required", None), (FORCED, "auto", reminder)]
    assert all(m["content"] != reminder for m in result.messages)  # the run's own list
    assert result.outcome == "completed" and model.forced_tool_choice == "auto"


def test_deepseek_thinking_mode_runs_a_planning_agent_to_the_end() -> None:
    with FakeOpenAI([reply({"reasoning_content": "Plan first.", "tool_calls": [PLAN]}),
                     reply({"reasoning_content": "Done.", "content": "Hello!"})],
                    rules=[deepseek_thinking()]) as server:
        result, _ = planning_run(server)

    assert (result.outcome, result.final) == ("completed", "Hello!")
    accepted = [b for b in server.bodies if not deepseek_problems(b)]
    assert [b.get("tool_choice") for b in accepted] == ["required", "auto"]


def test_a_refusal_of_an_auto_choice_is_not_retried() -> None:
    with FakeOpenAI(rules=[refuses_tool_choice("auto")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test-x", max_retries=0)
        result = Agent(model, planning=True).run("Greet me")  # nothing forced: "auto"

    assert result.outcome == "model_error" and "tool_choice: auto" in result.error
    assert choices(server) == ["auto"]


def test_a_400_about_something_else_is_not_retried() -> None:
    with FakeOpenAI([http_error(400, "Invalid 'messages[1].content': too long")]) as server:
        result, _ = planning_run(server)

    assert result.outcome == "model_error" and "too long" in result.error
    assert choices(server) == [FORCED]


def test_a_server_that_refuses_every_choice_costs_at_most_three_requests() -> None:
    with FakeOpenAI(rules=[refuses_tool_choice("named", "required", "auto")]) as server:
        result, _ = planning_run(server)

    assert result.outcome == "model_error" and "tool_choice" in result.error
    assert choices(server) == [FORCED, "required", "auto"]


def test_a_refused_stream_options_is_dropped_once_and_usage_is_estimated() -> None:
    from tests.provider_rules import refuses_stream_options

    with FakeOpenAI([reply(content="Hi"), reply(content="Again")],
                    rules=[refuses_stream_options()]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test-x", max_retries=0)
        first = Agent(model).run("Hi")
        Agent(model).run("Hi again")

    assert ["stream_options" in b for b in server.bodies] == [True, False, False]
    assert first.final == "Hi" and first.usage["estimated"] is True


def test_the_panel_log_shows_the_fallback() -> None:
    state = PanelState()
    with FakeOpenAI([reply({"tool_calls": [PLAN]}), reply(content="Hello!")],
                    rules=[refuses_tool_choice("named")]) as server:
        planning_run(server, observers=[state])

    assert "⇣ forcing todo_write refused by the server: sent 'required'" in state.text()


@pytest.mark.parametrize("refused", ["named", "required"])
def test_the_callers_message_list_is_never_changed(refused: str) -> None:
    messages = [{"role": "user", "content": "Greet me"}]
    with FakeOpenAI([reply({"tool_calls": [PLAN]})],
                    rules=[refuses_tool_choice("named", "required")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test-x", max_retries=0)
        model.complete(messages, [{"type": "function", "function": {
            "name": "todo_write", "parameters": {"type": "object"}}}],
            FORCED if refused == "named" else "required")

    assert messages == [{"role": "user", "content": "Greet me"}]
    assert server.bodies[-1]["messages"][-1]["content"].startswith("<reminder>")
