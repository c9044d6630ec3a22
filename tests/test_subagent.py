"""delegate_task: an isolated sub-agent with a tool subset, the parent's rules and budget."""

from __future__ import annotations

import threading
import time

import pytest

from harness import Agent, Hooks, Permissions, ScriptedModel, parallel, say, tool, tool_call
from harness.subagent import SUBAGENT_SYSTEM

TASK = "Summarise docs/returns.md in one sentence."


# -- local helpers ----------------------------------------------------------------------

def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request["tools"]]


def events(result, type_: str, depth: int | None = None) -> list:
    return [e for e in result.events
            if e.type == type_ and (depth is None or e.depth == depth)]


reads: list[str] = []


@tool
def read_file(path: str) -> str:
    """Read a file."""
    reads.append(path)
    return "Returns are accepted within 30 days."


@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return "written"


@pytest.fixture(autouse=True)
def _clear_reads():
    reads.clear()


def parent(model: ScriptedModel, **options) -> Agent:
    options.setdefault("subagent_tools", ("read_file",))
    return Agent(model, [read_file, write_file], subagents=True, **options)


# -- what the sub-agent sees ------------------------------------------------------------

def test_subagent_request_holds_only_its_system_prompt_and_the_task():
    model = ScriptedModel([tool_call("read_file", path="docs/returns.md", id="r0"),
                           tool_call("delegate_task", task=TASK, id="d"),
                           say("30 days."), say("Done.")])
    parent(model, system="You are the PARENT.").run("Tell me the return policy")
    assert model.requests[2]["messages"] == [{"role": "system", "content": SUBAGENT_SYSTEM},
                                             {"role": "user", "content": TASK}]


def test_subagent_gets_only_the_tools_named_in_subagent_tools():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"), say("30 days."),
                           say("Done.")])
    parent(model, planning=True).run("Tell me the return policy")
    assert tool_names(model.requests[0]) == ["read_file", "write_file", "todo_write",
                                             "delegate_task"]
    assert tool_names(model.requests[1]) == ["read_file"]
    assert model.requests[1]["tool_choice"] == "auto"


def test_subagent_has_no_tools_by_default():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"), say("30 days."),
                           say("Done.")])
    Agent(model, [read_file], subagents=True).run("Tell me the return policy")
    assert (model.requests[1]["tools"], model.requests[1]["tool_choice"]) == ([], None)


@pytest.mark.parametrize("name", ["search_web", "delegate_task", "todo_write"])
def test_subagent_tools_must_name_registered_tools(name):
    with pytest.raises(ValueError, match=name):
        Agent(ScriptedModel([]), [read_file], planning=True, subagents=True,
              subagent_tools=("read_file", name))


def test_subagent_cannot_delegate_again():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d1"),
                           tool_call("delegate_task", task="Go deeper", id="d2"),
                           say("Could not delegate."), say("Done.")])
    result = parent(model).run("Tell me the return policy")
    inner = events(result, "tool_result", depth=1)
    assert [(e.tool_name, e.status) for e in inner] == [("delegate_task", "unknown_tool")]
    assert len(result.delegations) == 1


def test_subagent_final_answer_is_the_tool_result():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           say("Within 30 days."), say("Done.")])
    result = parent(model).run("Tell me the return policy")
    assert model.requests[3]["messages"][-1] == {"role": "tool", "tool_call_id": "d",
                                                 "content": "Within 30 days."}
    outer = events(result, "tool_result", depth=0)
    assert [(e.tool_name, e.ok) for e in outer] == [("delegate_task", True)]
    assert reads == ["docs/returns.md"]


# -- its turn budget ----------------------------------------------------------------------

def test_subagent_out_of_turns_returns_its_partial_answer_marked_not_ok():
    model = ScriptedModel([
        tool_call("delegate_task", task=TASK, id="d"),
        parallel(say("Reading a."), tool_call("read_file", path="a", id="r1")),
        parallel(say("Found 30 days so far."), tool_call("read_file", path="b", id="r2")),
        say("Partly done."),
    ])
    result = parent(model, subagent_max_turns=2).run("Tell me the return policy")
    outcome = events(result, "tool_result", depth=0)[0]
    assert outcome.ok is False
    assert outcome.output == "[sub-agent stopped early: turn_limit] Found 30 days so far."
    assert result.delegations[0].outcome == "turn_limit"
    assert result.outcome == "completed"


def test_subagent_turn_budget_defaults_to_ten():
    script = [tool_call("delegate_task", task=TASK, id="d"),
              *(tool_call("read_file", path="docs/returns.md", id=f"r{n}") for n in range(10)),
              say("Gave up.")]
    model = ScriptedModel(script)
    result = parent(model).run("Tell me the return policy")
    assert len(events(result, "model_request", depth=1)) == 10
    assert result.delegations[0].outcome == "turn_limit"
    assert events(result, "tool_result", depth=0)[0].output.startswith(
        "[sub-agent stopped early: turn_limit]")


# -- permissions and hooks ----------------------------------------------------------------

def test_default_deny_still_allows_the_harness_tools():
    model = ScriptedModel([
        tool_call("todo_write", todos=[{"content": "Ask", "status": "completed"}], id="p"),
        tool_call("delegate_task", task=TASK, id="d"), say("30 days."), say("Done."),
    ])
    result = parent(model, planning=True, permissions=Permissions({}, default="deny")).run("Q")
    outer = events(result, "tool_result", depth=0)
    assert [(e.tool_name, e.ok) for e in outer] == [("todo_write", True), ("delegate_task", True)]


def test_permission_table_can_deny_delegate_task():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"), say("Done.")])
    result = parent(model, permissions=Permissions({"delegate_task": "deny"},
                                                   default="allow")).run("Q")
    outcome = events(result, "tool_result")[0]
    assert (outcome.status, outcome.ok) == ("blocked", False)
    assert result.delegations == []
    assert len(model.requests) == 2


def test_permission_table_can_deny_todo_write():
    model = ScriptedModel([tool_call("todo_write", todos=[], id="p"), say("Done.")])
    result = Agent(model, planning=True,
                   permissions=Permissions({"todo_write": "deny"})).run("Q")
    assert events(result, "tool_result")[0].status == "blocked"


def test_parent_permissions_deny_inside_the_subagent():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           say("Could not read."), say("Done.")])
    result = parent(model, permissions=Permissions({"read_file": "deny"},
                                                   default="allow")).run("Q")
    inner = events(result, "tool_result", depth=1)
    assert [(e.tool_name, e.status) for e in inner] == [("read_file", "blocked")]
    assert inner[0].output.startswith("Permission denied")
    assert reads == []


def test_pre_tool_use_hook_sees_subagent_calls_at_depth_one():
    seen = []
    hooks = Hooks()
    hooks.on("pre_tool_use", lambda e: seen.append((e.tool_name, e.depth, e.agent_id)))
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           say("30 days."), say("Done.")])
    result = parent(model, hooks=hooks).run("Q")
    child_id = result.delegations[0].child_id
    assert seen == [("delegate_task", 0, "main"), ("read_file", 1, child_id)]


def test_pre_tool_use_hook_can_block_a_subagent_call():
    hooks = Hooks()
    hooks.on("pre_tool_use", lambda e: "No reading inside." if e.depth == 1 else None)
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           say("Blocked."), say("Done.")])
    result = parent(model, hooks=hooks).run("Q")
    assert events(result, "tool_result", depth=1)[0].output == "No reading inside."
    assert reads == []


def test_events_from_inside_carry_depth_one_and_the_subagent_id():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           say("30 days."), say("Done.")])
    result = parent(model).run("Q")
    child_id = result.delegations[0].child_id
    inner = events(result, "model_request", depth=1) + events(result, "tool_call", depth=1)
    assert len(inner) == 3
    assert {e.agent_id for e in inner} == {child_id}
    assert child_id != "main"
    assert {e.agent_id for e in result.events if e.depth == 0} == {"main"}


def test_subagent_stop_hook_gets_task_outcome_and_usage():
    seen = []
    hooks = Hooks()
    hooks.on("subagent_stop", seen.append)
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           {**say("30 days."), "usage": {"prompt_tokens": 50,
                                                         "completion_tokens": 5}},
                           say("Done.")])
    parent(model, hooks=hooks).run("Q")
    [event] = seen
    assert (event.task, event.outcome) == (TASK, "completed")
    assert event.usage["total_tokens"] == 55


# -- usage ----------------------------------------------------------------------------------

def test_subagent_usage_counts_in_the_run_and_per_delegation():
    model = ScriptedModel([
        {**tool_call("delegate_task", task=TASK, id="d"),
         "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
        {**tool_call("read_file", path="a", id="r1"),
         "usage": {"prompt_tokens": 40, "completion_tokens": 4}},
        {**say("30 days."), "usage": {"prompt_tokens": 60, "completion_tokens": 6}},
        {**say("Done."), "usage": {"prompt_tokens": 200, "completion_tokens": 20}},
    ])
    result = parent(model).run("Q")
    assert (result.usage["prompt_tokens"], result.usage["completion_tokens"]) == (400, 40)
    assert result.usage["total_tokens"] == 440
    [done] = result.delegations
    assert (done.task, done.outcome, done.tool_calls) == (TASK, "completed", 1)
    assert done.usage["total_tokens"] == 110
    assert done.seconds >= 0


def test_each_delegation_is_recorded_separately():
    model = ScriptedModel([tool_call("delegate_task", task="First", id="d1"), say("One."),
                           tool_call("delegate_task", task="Second", id="d2"),
                           tool_call("read_file", path="docs/returns.md", id="r1"), say("Two."),
                           say("Done.")])
    result = parent(model).run("Q")
    assert [(d.task, d.tool_calls) for d in result.delegations] == [("First", 0), ("Second", 1)]
    assert len({d.child_id for d in result.delegations}) == 2


# -- the whole run's clock and cancel reach the sub-agent --------------------------------

def test_cancel_set_inside_a_subagent_ends_it_and_then_the_parent():
    cancel = threading.Event()

    @tool
    def stop_everything() -> str:
        """Press the stop button."""
        cancel.set()
        return "stopping"

    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("stop_everything", id="s"), say("never sent"),
                           say("never sent either")])
    agent = Agent(model, [stop_everything], subagents=True, subagent_tools=("stop_everything",))
    result = agent.run("Q", cancel=cancel)
    assert result.outcome == "cancelled"
    assert result.delegations[0].outcome == "cancelled"
    assert len(model.requests) == 2
    assert events(result, "tool_result", depth=0)[0].ok is False


def test_run_time_budget_reaches_the_subagent():
    @tool
    def slow() -> str:
        """Take a while."""
        time.sleep(0.06)
        return "slow result"

    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"), tool_call("slow", id="s"),
                           say("never sent"), say("never sent either")])
    agent = Agent(model, [slow], subagents=True, subagent_tools=("slow",), max_seconds=0.05)
    result = agent.run("Q")
    assert result.outcome == "time_limit"
    assert result.delegations[0].outcome == "time_limit"
    assert len(model.requests) == 2


def test_interrupt_inside_a_subagent_keeps_its_usage_and_its_delegation_record():
    @tool
    def slow_lookup(query: str) -> str:
        """Stands in for a tool that is running when the kernel is interrupted."""
        raise KeyboardInterrupt

    usage = {"prompt_tokens": 500, "completion_tokens": 50}
    model = ScriptedModel([
        {**tool_call("delegate_task", task=TASK, id="d"),
         "usage": {"prompt_tokens": 10, "completion_tokens": 1}},
        {**tool_call("slow_lookup", query="returns", id="s1"), "usage": usage},
    ])
    result = Agent(model, [slow_lookup], subagents=True,
                   subagent_tools=["slow_lookup"]).run("go")
    replies = sum(e.usage["total_tokens"] for e in result.events if e.type == "model_reply")
    assert result.outcome == "cancelled"
    assert replies == 561
    assert result.usage["total_tokens"] == 561
    [done] = result.delegations
    assert (done.outcome, done.usage["total_tokens"]) == ("cancelled", 550)
    ends = [e for e in result.events if e.type == "subagent_end"]
    assert [e.outcome for e in ends] == ["cancelled"]


def test_a_blank_task_is_refused_before_any_sub_agent_starts_and_forces_nothing():
    model = ScriptedModel([tool_call("delegate_task", task="  ", id="d"), say("ok")])
    result = Agent(model, subagents=True, planning=True).run("go")
    [refused] = [e for e in result.events if e.type == "tool_result"]
    assert refused.status == "invalid_arguments"
    assert "task is empty" in refused.output
    assert [e for e in result.events if e.type == "subagent_start"] == []
    assert [r["tool_choice"] for r in model.requests] == ["auto", "auto"]


def test_a_blocked_delegation_forces_no_plan_update():
    hooks = Hooks()
    hooks.on("pre_tool_use", lambda e: "no sub-agents today")
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"), say("ok")])
    Agent(model, subagents=True, planning=True, hooks=hooks).run("go")
    assert [r["tool_choice"] for r in model.requests] == ["auto", "auto"]


def test_a_delegation_that_stopped_early_still_forces_a_plan_update():
    model = ScriptedModel([tool_call("delegate_task", task=TASK, id="d"),
                           tool_call("read_file", path="docs/returns.md", id="r1"),
                           tool_call("read_file", path="docs/returns.md", id="r2"),
                           tool_call("todo_write", todos=[], id="t"), say("ok")])
    agent = Agent(model, [read_file], subagents=True, planning=True, subagent_max_turns=2,
                  subagent_tools=["read_file"])
    result = agent.run("go")
    assert result.delegations[0].outcome == "turn_limit"
    assert model.requests[3]["tool_choice"] == {"type": "function",
                                                "function": {"name": "todo_write"}}


def test_an_empty_answer_comes_back_as_a_sentence_not_an_empty_result():
    """GeekAgent returns 子 Agent 未返回结果 ("the sub-agent returned no result") for an
    empty answer; an empty tool message reads like a tool that printed nothing."""
    from harness import Agent, ScriptedModel, say, tool_call
    from harness.subagent import NO_ANSWER

    model = ScriptedModel([tool_call("delegate_task", task="Check the hinge policy."),
                           say(""), say("done")])
    result = Agent(model, subagents=True).run("Is a broken hinge covered?")
    [delegated] = [e for e in result.events if e.type == "tool_result" and e.depth == 0]
    assert delegated.ok and delegated.output == NO_ANSWER
