"""Message order holds whatever the model does and however the run ends.

Hypothesis writes whole scripts: parallel calls, unknown tools, bad arguments, tools
that fail, `todo_write` valid and invalid, final answers over an open plan, duplicate
call ids, and `delegate_task` with the sub-agent's own replies spliced in after the
reply that delegates. The folder's autouse check (`conftest.py`) runs
`assert_valid_transcript` on every run, sub-agents included; these tests add what a
run must also keep: a named outcome, a serialisable result, one result per call.
Then the ways a run stops early: cancel mid-round, time and turn limits, and
Kernel -> Interrupt (a KeyboardInterrupt) inside a tool.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import (OUTCOMES, Agent, Hooks, Permissions, ScriptedModel, parallel, say, tool,
                     tool_call)

from .transcript import assert_valid_transcript

SCRIPTS = settings(derandomize=True, deadline=None, database=None, max_examples=150,
                   suppress_health_check=list(HealthCheck))
VALID_PLANS = ('{"todos": [{"content": "Look it up", "status": "in_progress"}]}',
               '{"todos": [{"content": "Look it up", "status": "completed"}]}',
               '{"todos": []}')
INVALID_PLANS = ('{"todos": [{"content": "a", "status": "in_progress"}, '
                 '{"content": "b", "status": "in_progress"}]}',
                 '{"todos": null}', '{"todos": [{"content": " ", "status": "pending"}]}',
                 '{"todos": []} trailing', "")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


@tool
def boom() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


# -- hypothesis: scripts ----------------------------------------------------------------

CALL_IDS = st.sampled_from(["dup", "c1", "c2"]) | st.uuids().map(lambda u: u.hex[:8])
ARGS = st.text(max_size=20) | st.sampled_from(['{"a": 1, "b": 2}', '{"a": 1}', "{}", "[1]"])
LEAF_CALL = st.one_of(  # one call, as a reply of its own (`parallel` joins them)
    st.builds(tool_call, st.just("add"), ARGS, id=CALL_IDS),
    st.builds(tool_call, st.just("echo"), st.text(max_size=30).map(
        lambda t: json.dumps({"text": t})), id=CALL_IDS),
    st.builds(tool_call, st.just("boom"), id=CALL_IDS),
    st.builds(tool_call, st.sampled_from(["grant_admin", "todo_read", "", "add "]), id=CALL_IDS),
    st.builds(tool_call, st.just("todo_write"), st.sampled_from(VALID_PLANS + INVALID_PLANS),
              id=CALL_IDS),
)
TEXT = st.text(min_size=1, max_size=30)


@st.composite
def replies(draw: st.DrawFn, depth: int = 0) -> list[dict]:
    """One assistant reply, followed by the replies of any sub-agent it starts."""
    if draw(st.integers(0, 3)) == 0:  # an answer, sometimes twice (after a push back)
        return [say(draw(TEXT)) for _ in range(draw(st.integers(1, 2)))]
    calls, spliced = [], []
    for _ in range(draw(st.integers(1, 4))):
        if depth == 0 and draw(st.integers(0, 5)) == 0:
            task = json.dumps({"task": draw(st.text(max_size=20))})
            calls.append(tool_call("delegate_task", task, id=draw(CALL_IDS)))
            for _ in range(draw(st.integers(0, 3))):  # the child's own replies
                spliced += draw(replies(depth=1))
        else:
            calls.append(draw(LEAF_CALL))
    content = draw(st.none() | TEXT)
    reply = parallel(*calls) if content is None else parallel(say(content), *calls)
    return [reply, *spliced]


@st.composite
def scripts(draw: st.DrawFn) -> list[dict]:
    """Often a plan with an open item first, so final answers meet the stop gate."""
    opening = [tool_call("todo_write", VALID_PLANS[0], id="p0")]
    steps = [step for _ in range(draw(st.integers(1, 8))) for step in draw(replies())]
    return (opening if draw(st.booleans()) else []) + steps


def guarded_hooks() -> Hooks:
    """A guard that blocks echoing more than five characters (about half the echoes)."""
    hooks = Hooks()
    hooks.on("pre_tool_use", lambda e: "Blocked: too long to echo"  # (a refused call's
             if e.runnable and e.tool_name == "echo"  # arguments are its raw text)
             and len(e.arguments["text"]) > 5 else None)
    return hooks


@settings(SCRIPTS)
@given(scripts(), st.booleans(), st.booleans(), st.integers(1, 3), st.integers(1, 12),
       st.booleans())
def test_random_scripts_end_in_a_named_outcome_with_every_call_answered(
        script: list[dict], planning: bool, subagents: bool, reminder_after: int,
        max_turns: int, permissions: bool) -> None:
    agent = Agent(ScriptedModel(script), [add, echo, boom], planning=planning,
                  subagents=subagents, subagent_tools=("add", "echo"),
                  reminder_after=reminder_after, max_turns=max_turns, hooks=guarded_hooks(),
                  permissions=Permissions({"boom": "deny"}, default="allow") if permissions
                  else None)

    result = agent.run("Do the task")

    assert result.outcome in OUTCOMES
    assert result.turns <= max_turns
    json.dumps(result.to_dict())
    calls = [e.call_id for e in result.events if e.type == "tool_call" and e.depth == 0]
    results = [e.call_id for e in result.events if e.type == "tool_result" and e.depth == 0]
    assert calls == results  # every call that started has its result event
    if result.outcome in ("completed", "open_items"):
        assert result.final == result.messages[-1]["content"]
    updates = [e.todos for e in result.events if e.type == "plan_update" and e.depth == 0]
    assert [i.model_dump() for i in result.plan] == (updates[-1] if updates else [])


# -- stopping mid-round ---------------------------------------------------------------

def test_cancel_mid_round_answers_the_rest_and_adds_no_reminder() -> None:
    cancel = threading.Event()

    @tool
    def press_stop() -> str:
        """Stands for the user pressing stop while the round runs."""
        cancel.set()
        return "stopping"

    script = [parallel(tool_call("press_stop", id="c0"), tool_call("boom", id="c1"),
                       tool_call("boom", id="c2")), say("never")]
    result = Agent(ScriptedModel(script), [press_stop, boom], planning=True,
                   reminder_after=1).run("go", cancel=cancel)
    assert result.outcome == "cancelled"
    assert [m["role"] for m in result.messages[2:]] == ["assistant", "tool", "tool", "tool"]
    assert [m["content"][:7] for m in result.messages[4:]] == ["Not run", "Not run"]


def test_time_limit_mid_round_answers_the_rest_with_not_run() -> None:
    @tool
    def slow() -> str:
        """Takes longer than the run may."""
        time.sleep(0.1)
        return "slow"

    script = [parallel(*(tool_call("slow", id=f"c{i}") for i in range(3)))]
    result = Agent(ScriptedModel(script), [slow], max_seconds=0.05).run("go")
    assert result.outcome == "time_limit"
    assert [m["content"] for m in result.messages[3:]] == [
        "slow", "Not run: the run stopped (time_limit).", "Not run: the run stopped (time_limit)."]


def test_turn_limit_after_a_round_with_a_reminder_keeps_the_reminder_last() -> None:
    script = [tool_call("boom", id="c0"), tool_call("boom", id="c0")]
    result = Agent(ScriptedModel(script), [boom], planning=True, reminder_after=2,
                   max_turns=2).run("go")
    assert result.outcome == "turn_limit"
    assert result.messages[-1]["role"] == "user"
    assert result.messages[-1]["content"].startswith("<reminder>")


def test_turn_limit_inside_a_subagent_returns_its_partial_answer_to_the_parent() -> None:
    script = [tool_call("delegate_task", task="count", id="c0"),
              parallel(say("working on it"), tool_call("add", a=1, b=1, id="s1")),
              say("gave up")]
    result = Agent(ScriptedModel(script), [add], subagents=True, subagent_tools=("add",),
                   subagent_max_turns=1).run("go")
    assert result.delegations[0].outcome == "turn_limit"
    assert result.messages[3]["content"] == "[sub-agent stopped early: turn_limit] working on it"
    assert (result.outcome, result.final) == ("completed", "gave up")


# -- Kernel -> Interrupt ---------------------------------------------------------------

@tool
def interrupted() -> str:
    """Stands for Kernel -> Interrupt while a tool runs."""
    raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_tool_leaves_a_usable_cancelled_result() -> None:
    round_ = parallel(tool_call("add", a=1, b=2, id="c0"), tool_call("interrupted", id="c1"),
                      tool_call("boom", id="c2"))
    agent = Agent(ScriptedModel([round_, say("again")]), [add, interrupted, boom],
                  planning=True)
    result = agent.run("go")
    assert (result.outcome, result.error) == ("cancelled", "interrupted (KeyboardInterrupt)")
    assert [m["content"][:11] for m in result.messages[3:]] == ["3", "Interrupted", "Not run: in"]
    assert json.loads(json.dumps(result.to_dict()))["outcome"] == "cancelled"
    assert agent.run("go on").final == "again"  # the agent is still usable


def test_keyboard_interrupt_in_a_subagent_tool_cancels_the_whole_run() -> None:
    script = [tool_call("delegate_task", task="t", id="c0"), tool_call("interrupted", id="c0"),
              say("the parent carried on")]
    result = Agent(ScriptedModel(script), [interrupted], subagents=True,
                   subagent_tools=("interrupted",)).run("go")
    assert (result.outcome, result.final) == ("cancelled", None)
    assert result.error == "interrupted (KeyboardInterrupt)"
    assert len(result.messages) == 4  # the delegation and its one tool message


# -- the checker itself -----------------------------------------------------------------

@pytest.mark.parametrize("messages, problem", [
    ([{"role": "user", "content": "x"}, {"role": "user", "content": "y"}], "system message"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      tool_call("f", id="a"),
      {"role": "user", "content": "<reminder>"},
      {"role": "tool", "tool_call_id": "a", "content": "r"}], "lands between"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      parallel(tool_call("f", id="a"), tool_call("f", id="b")),
      {"role": "tool", "tool_call_id": "b", "content": "r"},
      {"role": "tool", "tool_call_id": "a", "content": "r"}], "expected 'a'"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      {"role": "tool", "tool_call_id": "a", "content": "r"}], "no open call"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      {"role": "developer", "content": "x"}], "role 'developer'"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      tool_call("f", id="a")], "unanswered"),
    ([{"role": "system", "content": ""}, {"role": "user", "content": "x"},
      {"role": "assistant", "content": None}],  # hand-written: no text and no call, broken
     "needs string content"),
])
def test_checker_rejects_a_broken_transcript(messages: list[dict], problem: str) -> None:
    with pytest.raises(AssertionError, match=problem):
        assert_valid_transcript(messages)
