"""Lesson 08 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l08 import _token_runs, check_summarize, check_tokens_by_agent
from solutions import l08 as solution

import pytest


def test_summarize_check_accepts_the_reference():
    assert check_summarize(solution.summarize) is True


def test_summarize_check_rejects_counting_stop_events_as_pushbacks():
    def stops_as_pushbacks(result) -> dict:
        summary = solution.summarize(result)
        summary["pushbacks"] = sum(e.type == "stop" for e in result.events)
        return summary

    assert check_summarize(stops_as_pushbacks) is False


@pytest.mark.parametrize("stops", [
    pytest.param(lambda n: n - 1, id="stop events less one"),
    pytest.param(lambda n: max(n - 1, 0), id="stop events less one, at least 0"),
])
def test_summarize_check_rejects_counting_pushbacks_as_stop_events_less_one(stops, capsys):
    def stops_less_one(result) -> dict:
        answers = sum(e.type == "stop" and e.depth == 0 for e in result.events)
        return {**solution.summarize(result), "pushbacks": stops(answers)}

    assert check_summarize(stops_less_one) is False
    assert "stop events, less one or not, are not push backs" in capsys.readouterr().out


def test_summarize_check_rejects_counting_answers_with_open_items_as_pushbacks(capsys):
    def open_answers(result) -> dict:  # less the last one when the run ended on it
        answers = sum(e.type == "stop" and e.depth == 0 and bool(e.get("open_items"))
                      for e in result.events)
        return {**solution.summarize(result),
                "pushbacks": answers - (result.outcome == "open_items")}

    assert check_summarize(open_answers) is False
    assert "a run whose answer was cut off" in capsys.readouterr().out


def test_summarize_check_rejects_the_last_stop_events_pushback_count():
    def last_stop(result) -> dict:
        stops = [e for e in result.events if e.type == "stop" and e.depth == 0]
        return {**solution.summarize(result),
                "pushbacks": stops[-1].get("pushbacks", 0) if stops else 0}

    assert check_summarize(last_stop) is False


def test_summarize_check_rejects_counting_the_main_agents_requests_as_turns(capsys):
    main_requests = _summarize_with(
        "turns", lambda e: e.type == "model_request" and e.depth == 0)
    assert check_summarize(main_requests) is False
    assert "a run that compacted its history: turns should be 5" in capsys.readouterr().out


def test_summarize_check_rejects_leaving_out_the_sub_agents_calls():
    def main_only(result) -> dict:
        summary = solution.summarize(result)
        results = [e for e in result.events if e.type == "tool_result" and e.depth == 0]
        summary["tool_calls_ok"] = sum(e.ok for e in results)
        summary["tool_calls_failed"] = sum(not e.ok for e in results)
        return summary

    assert check_summarize(main_only) is False


def _summarize_with(key: str, counted) -> object:
    """The reference summary, with ``key`` counted by ``counted(event)`` over every event."""
    def summarize(result) -> dict:
        return {**solution.summarize(result), key: sum(counted(e) for e in result.events)}

    return summarize


def test_summarize_check_rejects_counting_only_errors_as_failed():
    errors_only = _summarize_with(
        "tool_calls_failed", lambda e: e.type == "tool_result" and e.status == "error")
    assert check_summarize(errors_only) is False


def test_summarize_check_rejects_counting_refused_delegations(capsys):
    delegate_calls = _summarize_with(
        "delegations", lambda e: e.type == "tool_call" and e.tool_name == "delegate_task")
    assert check_summarize(delegate_calls) is False
    assert "refused started none" in capsys.readouterr().out


def test_summarize_check_rejects_counting_the_sub_agents_requests_as_turns(capsys):
    every_request = _summarize_with("turns", lambda e: e.type == "model_request")
    assert check_summarize(every_request) is False
    assert "not the sub-agents'" in capsys.readouterr().out


def test_summarize_check_rejects_counting_reminders_by_the_rounds_they_cover():
    reminder_rounds = _summarize_with(
        "reminders", lambda e: e.data.get("rounds", 0) if e.type == "reminder" else 0)
    assert check_summarize(reminder_rounds) is False


def test_tokens_by_agent_check_accepts_the_reference():
    assert check_tokens_by_agent(solution.tokens_by_agent) is True


def test_tokens_by_agent_check_accepts_the_sub_agents_from_their_delegation_records():
    def from_records(result) -> dict:
        subs = {d.child_id: d.usage["total_tokens"] for d in result.delegations}
        return {"main": result.usage["total_tokens"] - sum(subs.values()), **subs}

    assert check_tokens_by_agent(from_records) is True


def test_tokens_by_agent_check_runs_the_shapes_its_text_promises():
    runs = {label: play() for label, play in _token_runs()}
    for label, result in runs.items():
        tokens = solution.tokens_by_agent(result)
        assert sum(tokens.values()) == result.usage["total_tokens"], label
    lesson, two, reported, at_once = runs.values()
    requests = [e.agent_id for e in lesson.events if e.type == "model_request"]
    assert requests.count("main") == 8 and requests.count("main.sub1") == 2
    assert [d.child_id for d in two.delegations] == ["main.sub1", "main.sub2"]
    assert not any(e.type == "tool_call" and e.agent_id == "main.sub2" for e in two.events)
    assert solution.tokens_by_agent(reported) == {"main": 4210, "main.sub1": 1160}
    assert reported.usage["estimated"] is False
    assert reported.usage["total_tokens"] > (reported.usage["prompt_tokens"]
                                             + reported.usage["completion_tokens"])
    assert list(solution.tokens_by_agent(at_once)) == ["main"]


def _tokens_where(counted, key: str = "total_tokens"):
    """The reference sum, over only the model_reply events ``counted(event)`` keeps."""
    def tokens_by_agent(result) -> dict:
        tokens: dict = {}
        for e in result.events:
            if e.type == "model_reply" and counted(e):
                tokens[e.agent_id] = tokens.get(e.agent_id, 0) + e.usage[key]
        return tokens

    return tokens_by_agent


def test_tokens_by_agent_check_rejects_counting_only_the_main_agent(capsys):
    assert check_tokens_by_agent(_tokens_where(lambda e: e.depth == 0)) is False
    assert "only the main agent is there" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_prompt_plus_completion_tokens(capsys):
    def prompt_plus_completion(result) -> dict:
        tokens: dict = {}
        for e in result.events:
            if e.type == "model_reply":
                tokens[e.agent_id] = (tokens.get(e.agent_id, 0) + e.usage["prompt_tokens"]
                                      + e.usage["completion_tokens"])
        return tokens

    assert check_tokens_by_agent(prompt_plus_completion) is False
    out = capsys.readouterr().out
    assert "reasoning tokens in its total" in out
    assert "you added prompt_tokens and completion_tokens" in out


def test_tokens_by_agent_check_rejects_prompt_tokens_only(capsys):
    assert check_tokens_by_agent(_tokens_where(lambda e: True, "prompt_tokens")) is False
    assert "prompt_tokens only" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_the_last_request_only(capsys):
    def last_only(result) -> dict:
        return {e.agent_id: e.usage["total_tokens"] for e in result.events
                if e.type == "model_reply"}

    assert check_tokens_by_agent(last_only) is False
    assert "its last request's tokens" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_the_context_of_the_last_request(capsys):
    def context(result) -> dict:
        return {e.agent_id: e.usage["prompt_tokens"] for e in result.events
                if e.type == "model_reply"}

    assert check_tokens_by_agent(context) is False
    assert "the context of its last request" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_keys_by_depth(capsys):
    def by_depth(result) -> dict:
        tokens: dict = {}
        for e in result.events:
            if e.type == "model_reply":
                tokens[e.depth] = tokens.get(e.depth, 0) + e.usage["total_tokens"]
        return tokens

    assert check_tokens_by_agent(by_depth) is False
    assert "your keys are depths" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_the_delegation_records_alone(capsys):
    def records_only(result) -> dict:
        return {d.child_id: d.usage["total_tokens"] for d in result.delegations}

    assert check_tokens_by_agent(records_only) is False
    assert "there is no 'main'" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_the_whole_run_as_the_main_agents(capsys):
    def whole_run_as_main(result) -> dict:
        return {"main": result.usage["total_tokens"],
                **{d.child_id: d.usage["total_tokens"] for d in result.delegations}}

    assert check_tokens_by_agent(whole_run_as_main) is False
    assert "'main' has the whole run's tokens" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_reading_each_agents_run_end(capsys):
    def run_ends(result) -> dict:
        return {e.agent_id: e.usage["total_tokens"] for e in result.events
                if e.type == "run_end"}

    assert check_tokens_by_agent(run_ends) is False
    assert "'main' has the whole run's tokens" in capsys.readouterr().out


def test_tokens_by_agent_check_rejects_dropping_an_agent_that_made_no_tool_call(capsys):
    def agents_that_called_tools(result) -> dict:
        agents = {e.agent_id for e in result.events if e.type == "tool_call"}
        tokens = solution.tokens_by_agent(result)
        return {agent: n for agent, n in tokens.items() if agent in agents}

    assert check_tokens_by_agent(agents_that_called_tools) is False
    out = capsys.readouterr().out
    assert "main.sub2 made no tool call" in out
    assert "two sub-agents, one that made no tool call" in out


def test_tokens_by_agent_check_rejects_the_usage_dicts_themselves(capsys):
    def usage_dicts(result) -> dict:
        return {"main": result.usage,
                **{d.child_id: d.usage for d in result.delegations}}

    assert check_tokens_by_agent(usage_dicts) is False
    assert "each value should be an int" in capsys.readouterr().out
