"""Forced ``tool_choice``: todo_write on the first request with plan_first, and after a
delegation; ``"auto"`` everywhere else. Each test checks the whole list of choices."""

from __future__ import annotations

import pytest

from harness import Agent, ScriptedModel, say, tool, tool_call

FORCED = {"type": "function", "function": {"name": "todo_write"}}
DONE_PLAN = {"todos": [{"content": "Look it up", "status": "completed"}]}


def choices(model: ScriptedModel) -> list:
    return [request["tool_choice"] for request in model.requests]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def test_plan_first_forces_todo_write_on_the_first_request_only():
    model = ScriptedModel([tool_call("todo_write", DONE_PLAN, id="p"),
                           tool_call("lookup", query="x", id="l"), say("Done.")])
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto", "auto"]


def test_planning_alone_forces_nothing():
    model = ScriptedModel([tool_call("todo_write", DONE_PLAN, id="p"),
                           tool_call("lookup", query="x", id="l"), say("Done.")])
    Agent(model, [lookup], planning=True).run("Research")
    assert choices(model) == ["auto", "auto", "auto"]


def test_forcing_resets_even_when_the_forced_request_ignores_it():
    model = ScriptedModel([tool_call("lookup", query="x", id="l"), say("Done.")], strict=False)
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto"]


def test_plan_first_is_per_run():
    model = ScriptedModel([say("First."), say("Second.")])
    agent = Agent(model, planning=True)
    agent.run("One", plan_first=True)
    agent.run("Two")
    assert choices(model) == [FORCED, "auto"]


def test_delegation_forces_todo_write_on_the_next_request():
    model = ScriptedModel([
        tool_call("delegate_task", task="Summarise the policy", id="d"),
        say("Summary."),  # the sub-agent's only request
        tool_call("todo_write", DONE_PLAN, id="p"),
        tool_call("lookup", query="x", id="l"),
        say("Done."),
    ])
    Agent(model, [lookup], planning=True, subagents=True).run("Research")
    assert choices(model) == ["auto", None, FORCED, "auto", "auto"]


def test_plan_first_and_delegation_each_force_once():
    model = ScriptedModel([
        tool_call("todo_write", DONE_PLAN, id="p1"),
        tool_call("delegate_task", task="Summarise the policy", id="d"),
        say("Summary."),
        tool_call("todo_write", DONE_PLAN, id="p2"),
        say("Done."),
    ])
    Agent(model, planning=True, subagents=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto", None, FORCED, "auto"]


def test_every_delegation_round_forces_the_next_request():
    model = ScriptedModel([
        tool_call("delegate_task", task="First part", id="d1"),
        say("One."),
        tool_call("delegate_task", task="Second part", id="d2"),
        say("Two."),
        say("Done."),
    ], strict=False)  # it answers the forced todo_write with another delegation
    Agent(model, planning=True, subagents=True).run("Research")
    assert choices(model) == ["auto", None, FORCED, None, FORCED]


def test_delegation_without_planning_forces_nothing():
    model = ScriptedModel([tool_call("delegate_task", task="Summarise the policy", id="d"),
                           say("Summary."), say("Done.")])
    Agent(model, subagents=True).run("Research")
    assert choices(model) == ["auto", None, "auto"]


def test_forced_request_offers_todo_write_among_its_tools():
    model = ScriptedModel([say("Done.")])
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert FORCED["function"]["name"] in names


def test_plan_first_without_planning_is_an_error_that_says_why():
    with pytest.raises(ValueError, match="planning=True"):
        Agent(ScriptedModel([say("Hi.")])).run("One", plan_first=True)
