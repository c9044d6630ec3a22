"""One budget for the whole run: requests, tool calls and input tokens are shared by
every sub-agent; running out ends the run with an outcome that names what ran out."""

from __future__ import annotations

import pytest

from harness import Agent, Hooks, ScriptedModel, parallel, say, tool, tool_call


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def answered(result) -> bool:
    """Every tool call of every assistant message has its tool message, in order."""
    asked = [c["id"] for m in result.messages if m["role"] == "assistant"
             for c in m.get("tool_calls") or ()]
    return asked == [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]


def fan_out(n: int) -> list:
    """One reply with n delegations; each sub-agent looks three times, then answers."""
    child = [tool_call("look", query="a"), tool_call("look", query="b"),
             tool_call("look", query="c"), say("done")]
    fan = parallel(*(tool_call("delegate_task", task=f"part {i}") for i in range(n)))
    return [fan, *child * n, say("all done")]


def test_a_fan_out_of_25_delegations_ends_within_the_runs_request_budget():
    model = ScriptedModel(fan_out(25))
    agent = Agent(model, [look], max_turns=2, subagents=True, subagent_tools=["look"],
                  max_requests=10, max_calls_per_reply=None)
    result = agent.run("go")
    assert result.outcome == "request_limit"
    assert len(model.requests) == 10
    assert answered(result)
    assert len(result.delegations) == 3  # 1 + 4 + 4 + (4 stopped at the limit) = 10 requests
    assert result.delegations[-1].outcome == "request_limit"


def test_the_default_budget_bounds_a_fan_out_too():
    model = ScriptedModel(fan_out(25))
    result = Agent(model, [look], max_turns=2, subagents=True,
                   subagent_tools=["look"]).run("go")
    statuses = [e.status for e in result.events if e.type == "tool_result" and e.depth == 0]
    assert statuses.count("too_many_calls") == 15  # at most 10 calls a reply by default
    assert len(model.requests) <= 50
    assert answered(result)


def test_the_tool_call_budget_is_shared_and_stops_before_the_next_call():
    ran = []

    @tool
    def work(n: int) -> int:
        """Do some work."""
        ran.append(n)
        return n

    model = ScriptedModel([parallel(*(tool_call("work", n=i) for i in range(5))), say("ok")])
    result = Agent(model, [work], max_tool_calls=3).run("go")
    assert (result.outcome, ran) == ("tool_call_limit", [0, 1, 2])
    assert [m["content"] for m in result.messages if m["role"] == "tool"][3:] == [
        "Not run: the run stopped (tool_call_limit)."] * 2


def test_the_input_token_budget_stops_before_a_request_that_would_go_past_it():
    script = [tool_call("look", query=q) for q in "abc"] + [say("done")]
    free = Agent(ScriptedModel(script), [look]).run("go")
    sizes = [e.usage["prompt_tokens"] for e in free.events if e.type == "model_reply"]
    model = ScriptedModel(script)
    result = Agent(model, [look], max_input_tokens=sum(sizes[:3]) - 1).run("go")
    assert result.outcome == "token_limit"
    assert len(model.requests) == 2  # the third request would have gone past the limit
    assert answered(result)


def test_a_reply_may_make_at_most_max_calls_per_reply_calls():
    model = ScriptedModel([parallel(*(tool_call("look", query=str(i)) for i in range(4))),
                           say("ok")])
    result = Agent(model, [look], max_calls_per_reply=2).run("go")
    done = [(e.status, e.output) for e in result.events if e.type == "tool_result"]
    assert [s for s, _ in done] == ["ok", "ok", "too_many_calls", "too_many_calls"]
    assert done[2][1].startswith("Not run: one reply may make at most 2 tool calls")
    assert result.outcome == "completed"


def test_the_run_start_event_carries_the_limits():
    result = Agent(ScriptedModel([say("hi")]), max_requests=7).run("go")
    assert result.events[0].limits == {"requests": 7, "tool_calls": 100, "input_tokens": None}


@pytest.mark.parametrize("setting", [{"max_requests": 0}, {"max_tool_calls": 0},
                                     {"max_input_tokens": -1}, {"max_calls_per_reply": 0}])
def test_a_budget_below_one_is_refused_when_the_agent_is_made(setting):
    with pytest.raises(ValueError, match="at least 1"):
        Agent(ScriptedModel([]), **setting)


# -- checked results: a stop hook that refuses an answer ----------------------------------

def refuse_without(word: str) -> Hooks:
    hooks = Hooks()
    hooks.on("stop", lambda e: None if word in e.final else f"say where '{word}' comes from.")
    return hooks


def test_a_refused_answer_goes_back_once_with_the_reason_then_is_accepted():
    model = ScriptedModel([say("Yes."), say("Yes, see returns.md:10.")])
    result = Agent(model, hooks=refuse_without("returns.md")).run("Can I return it?")
    assert (result.outcome, result.final) == ("completed", "Yes, see returns.md:10.")
    refusal = model.requests[1]["messages"][-1]
    assert refusal["role"] == "user" and "say where 'returns.md' comes from." in refusal["content"]
    assert [e.type for e in result.events if e.type == "answer_refused"] == ["answer_refused"]


def test_an_answer_refused_every_time_ends_unverified_with_the_last_answer_and_reason():
    model = ScriptedModel([say("Yes.")] * 5)
    result = Agent(model, hooks=refuse_without("returns.md"), max_refusals=2).run("go")
    assert (result.outcome, result.final) == ("unverified", "Yes.")
    assert result.error == "say where 'returns.md' comes from."
    assert len(model.requests) == 3


def test_an_answer_refused_on_the_last_turn_ends_unverified_not_turn_limit():
    model = ScriptedModel([say("Yes.")])
    result = Agent(model, hooks=refuse_without("x"), max_turns=1).run("go")
    assert (result.outcome, result.final) == ("unverified", "Yes.")
