"""Forced ``tool_choice``: todo_write on the first request with plan_first, and after a
delegation; ``"auto"`` everywhere else. Each test checks the whole list of choices."""

from __future__ import annotations

import pytest

import json

from harness import Agent, ScriptedModel, tool

FORCED = {"type": "function", "function": {"name": "todo_write"}}
DONE_PLAN = {"todos": [{"content": "Look it up", "status": "completed"}]}


# -- local helpers: wire-format tool calls for ScriptedModel -------------------------

def step(call_id: str, name: str, args: dict) -> dict:
    """An assistant message with one tool call."""
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function",
                                             "function": {"name": name,
                                                          "arguments": json.dumps(args)}}]}


def choices(model: ScriptedModel) -> list:
    return [request["tool_choice"] for request in model.requests]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def test_plan_first_forces_todo_write_on_the_first_request_only():
    model = ScriptedModel([step("p", "todo_write", DONE_PLAN), step("l", "lookup", {"query": "x"}),
                           {"content": "Done."}])
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto", "auto"]


def test_planning_alone_forces_nothing():
    model = ScriptedModel([step("p", "todo_write", DONE_PLAN), step("l", "lookup", {"query": "x"}),
                           {"content": "Done."}])
    Agent(model, [lookup], planning=True).run("Research")
    assert choices(model) == ["auto", "auto", "auto"]


def test_forcing_resets_even_when_the_forced_request_ignores_it():
    model = ScriptedModel([step("l", "lookup", {"query": "x"}), {"content": "Done."}])
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto"]


def test_plan_first_is_per_run():
    model = ScriptedModel([{"content": "First."}, {"content": "Second."}])
    agent = Agent(model, planning=True)
    agent.run("One", plan_first=True)
    agent.run("Two")
    assert choices(model) == [FORCED, "auto"]


def test_delegation_forces_todo_write_on_the_next_request():
    model = ScriptedModel([
        step("d", "delegate_task", {"task": "Summarise the policy"}),
        {"content": "Summary."},                      # the sub-agent's only request
        step("p", "todo_write", DONE_PLAN),
        step("l", "lookup", {"query": "x"}),
        {"content": "Done."},
    ])
    Agent(model, [lookup], planning=True, subagents=True).run("Research")
    assert choices(model) == ["auto", None, FORCED, "auto", "auto"]


def test_plan_first_and_delegation_each_force_once():
    model = ScriptedModel([
        step("p1", "todo_write", DONE_PLAN),
        step("d", "delegate_task", {"task": "Summarise the policy"}),
        {"content": "Summary."},
        step("p2", "todo_write", DONE_PLAN),
        {"content": "Done."},
    ])
    Agent(model, planning=True, subagents=True).run("Research", plan_first=True)
    assert choices(model) == [FORCED, "auto", None, FORCED, "auto"]


def test_every_delegation_round_forces_the_next_request():
    model = ScriptedModel([
        step("d1", "delegate_task", {"task": "First part"}),
        {"content": "One."},
        step("d2", "delegate_task", {"task": "Second part"}),
        {"content": "Two."},
        {"content": "Done."},
    ])
    Agent(model, planning=True, subagents=True).run("Research")
    assert choices(model) == ["auto", None, FORCED, None, FORCED]


def test_delegation_without_planning_forces_nothing():
    model = ScriptedModel([step("d", "delegate_task", {"task": "Summarise the policy"}),
                           {"content": "Summary."}, {"content": "Done."}])
    Agent(model, subagents=True).run("Research")
    assert choices(model) == ["auto", None, "auto"]


def test_forced_request_offers_todo_write_among_its_tools():
    model = ScriptedModel([{"content": "Done."}])
    Agent(model, [lookup], planning=True).run("Research", plan_first=True)
    names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert FORCED["function"]["name"] in names


def test_plan_first_without_planning_is_an_error_that_says_why():
    with pytest.raises(ValueError, match="planning=True"):
        Agent(ScriptedModel([{"content": "Hi."}])).run("One", plan_first=True)
