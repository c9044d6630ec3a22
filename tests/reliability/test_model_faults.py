"""Model faults over real HTTP: each one ends in a named outcome, or the run recovers.

`OpenAIModel` talks to `tests.fake_openai` through the real SDK. Every run plans
first (a `todo_write` the server answers before the fault), so each test also checks
that the plan and the transcript so far survive the fault. Retries are the SDK's own:
a persistent fault costs exactly ``max_retries + 1`` requests, never more.
"""

from __future__ import annotations

import time

import pytest

from harness import Agent, OpenAIModel, parallel, tool, tool_call
from tests.fake_openai import (
    FakeOpenAI,
    Scripted,
    choice_without_message,
    dropped,
    http_error,
    invalid_json,
    no_choices,
    rate_limited,
    reply,
    server_error,
    slow,
)

pytest_plugins = ("tests.fake_openai",)  # the `fake_openai` fixture

KEY = "sk-test-faults-0123456789abcdefghij"
TASK = "What is 2 + 3?"
PLAN = [{"content": "Add the numbers", "status": "in_progress"}]
DONE = [{"content": "Add the numbers", "status": "completed"}]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


PLAN_REPLY = reply(tool_call("todo_write", todos=PLAN, id="plan_1"))
FINISH = (reply(tool_call("todo_write", todos=DONE, id="plan_2")), reply(content="2 + 3 = 5"))


def run(server: FakeOpenAI, *entries: Scripted, **client_kwargs: object):
    """Plan first, then whatever the server is told to answer; a fresh agent each time."""
    server.add(PLAN_REPLY, *entries)
    client_kwargs.setdefault("max_retries", 0)
    model = OpenAIModel(model="fake-model", base_url=server.base_url, api_key=KEY,
                        **client_kwargs)
    return Agent(model, [add], planning=True).run(TASK)


def assert_planned_then_stopped(result) -> None:
    """The fault ended the run after the plan: plan and transcript are exactly as left."""
    assert [(i.content, i.status) for i in result.plan] == [("Add the numbers", "in_progress")]
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "tool"]
    assert result.messages[2]["tool_calls"][0]["id"] == "plan_1"
    assert result.messages[3]["content"].startswith("Plan updated")


def assert_recovered(result) -> None:
    assert (result.outcome, result.final) == ("completed", "2 + 3 = 5")
    assert [(i.content, i.status) for i in result.plan] == [("Add the numbers", "completed")]


# -- transient faults: the SDK retries, the run completes -----------------------------

def test_rate_limit_waits_the_retry_after_seconds_then_completes(fake_openai: FakeOpenAI) -> None:
    started = time.monotonic()
    result = run(fake_openai, http_error(429, "Rate limit reached", headers={"Retry-After": "0.3"}),
                 *FINISH, max_retries=2)
    assert_recovered(result)
    assert time.monotonic() - started >= 0.3  # the SDK honoured the header
    assert len(fake_openai.requests) == 4  # plan, 429, its retry, final


@pytest.mark.parametrize("fault", [rate_limited(), server_error(500), server_error(503)],
                         ids=["429", "500", "503"])
def test_transient_fault_is_retried_once_by_the_sdk_and_the_run_completes(
        fake_openai: FakeOpenAI, fault: Scripted) -> None:
    result = run(fake_openai, fault, *FINISH, max_retries=2)
    assert_recovered(result)
    assert len(fake_openai.requests) == 4


def test_slow_reply_past_the_timeout_is_retried_by_the_sdk(fake_openai: FakeOpenAI) -> None:
    result = run(fake_openai, slow(5.0), *FINISH, timeout=0.3, max_retries=1)
    assert_recovered(result)
    assert len(fake_openai.requests) == 4


# -- persistent faults: a named outcome, nothing lost --------------------------------

@pytest.mark.parametrize("retries", [0, 2])
def test_persistent_500_costs_exactly_max_retries_plus_one_requests(
        fake_openai: FakeOpenAI, retries: int) -> None:
    result = run(fake_openai, *[server_error(500)] * 5, max_retries=retries)
    assert result.outcome == "model_error"
    assert "InternalServerError" in result.error and "500" in result.error
    assert len(fake_openai.requests) == 1 + retries + 1  # the plan, then the tries
    assert_planned_then_stopped(result)


@pytest.mark.parametrize("fault, reason", [
    (slow(5.0), "Timeout"),
    (dropped(), "APIConnectionError"),
    (invalid_json(), "could not be read"),
    (choice_without_message(), "no choice with a message"),
    (no_choices(), "no choice with a message"),
], ids=["timeout", "dropped", "invalid json", "choice without message", "no choices"])
def test_fault_ends_model_error_keeping_plan_and_transcript(
        fake_openai: FakeOpenAI, fault: Scripted, reason: str) -> None:
    started = time.monotonic()
    result = run(fake_openai, fault, timeout=0.3)
    assert result.outcome == "model_error"
    assert reason in result.error
    assert time.monotonic() - started < 2
    assert len(fake_openai.requests) == 2
    assert_planned_then_stopped(result)


# -- odd replies: the tool layer refuses, the model reads why and recovers ------------

@pytest.mark.parametrize("bad_call, says", [
    (tool_call("add", '{"a": 2, "b":', id="c1"), "Error: arguments are not valid JSON"),
    (tool_call("add", '{"a": 2, "b": 3} {"a": 9}', id="c1"),
     "Error: arguments must be one JSON object"),
    (tool_call("add", a="2", b=3, id="c1"), "Error: invalid arguments: 'a'"),
    (tool_call("add", "[2, 3]", id="c1"), "Error: arguments must be a JSON object"),
    (tool_call("delete_everything", id="c1"), "Error: unknown tool 'delete_everything'"),
    (tool_call("", id="c1"), "Error: unknown tool ''"),
], ids=["truncated", "trailing", "wrong type", "not an object", "unknown tool", "no name"])
def test_bad_tool_call_is_answered_with_an_error_and_the_run_recovers(
        fake_openai: FakeOpenAI, bad_call: dict, says: str) -> None:
    result = run(fake_openai, reply(bad_call), reply(tool_call("add", a=2, b=3, id="c2")),
                 *FINISH)
    assert_recovered(result)
    refusal = result.messages[5]
    assert (refusal["role"], refusal["tool_call_id"]) == ("tool", "c1")
    assert refusal["content"].startswith(says)
    assert result.messages[7]["content"] == "5"


def test_duplicate_call_ids_run_once_and_every_call_is_answered(
        fake_openai: FakeOpenAI) -> None:
    twice = tool_call("add", a=2, b=3, id="dup")
    result = run(fake_openai, reply(parallel(twice, twice)), reply(twice), *FINISH)
    assert_recovered(result)
    outputs = [m["content"] for m in result.messages if m.get("tool_call_id") == "dup"]
    assert outputs[0] == "5"
    assert [o.startswith("Error: call id 'dup' was already used") for o in outputs[1:]] == [
        True, True]
    assert sum(e.type == "tool_result" and e.status == "ok" and e.tool_name == "add"
               for e in result.events) == 1


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK warns about the odd types
@pytest.mark.parametrize("odd", [{"id": {"nested": 1}}, {"id": 42}, {"name": ["add"]}],
                         ids=["dict id", "int id", "list name"])
def test_call_with_a_non_string_id_or_name_is_refused_not_raised(
        fake_openai: FakeOpenAI, odd: dict) -> None:
    # Hand-written: the call's id or name is made a non-string below, which the builders
    # cannot express.
    bad = {"id": "c1", "type": "function", "function": {"name": "add",
                                                        "arguments": '{"a": 2, "b": 3}'}}
    bad.update({k: v for k, v in odd.items() if k == "id"})
    bad["function"].update({k: v for k, v in odd.items() if k == "name"})
    result = run(fake_openai, reply(tool_calls=[bad]), *FINISH)
    assert_recovered(result)  # and the autouse check finds every id a string


def test_empty_assistant_message_with_an_open_plan_gets_one_push_back_and_recovers(
        fake_openai: FakeOpenAI) -> None:
    result = run(fake_openai, reply(content=None), *FINISH)
    assert_recovered(result)
    pushed_back = fake_openai.bodies[2]["messages"]
    assert pushed_back[-1]["role"] == "user" and "open items" in pushed_back[-1]["content"]
    assert pushed_back[-2] == {"role": "assistant", "content": ""}  # never content: null
