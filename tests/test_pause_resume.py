"""A run that waits for a person (issue 30, the Pause contract): ``approve="pause"`` ends
the run ``awaiting_approval`` with ``result.pending``; ``agent.resume`` goes on from the
transcript, plan, budget and turns, in this process or after save/load in another."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from harness import Agent, Permissions, RunResult, ScriptedModel, parallel, say, tool, tool_call
from harness.pause import spent

PAID: list[str] = []


@tool(side_effects=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    PAID.append(order_id)
    return f"refunded {order_id}"


@tool(parallel=True)
def look(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: delivered"


def agent(steps, **settings) -> Agent:
    perms = Permissions({"look": "allow", "refund": "ask"}, approve="pause")
    return Agent(ScriptedModel(steps), [look, refund], permissions=perms, **settings)


def answers(result) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in result.messages if m["role"] == "tool"]


@pytest.fixture(autouse=True)
def _fresh():
    PAID.clear()


def steps_of_one_round():
    return [parallel(tool_call("look", order_id="A", id="c1"),
                     tool_call("refund", order_id="A", id="c2"),
                     tool_call("look", order_id="B", id="c3")),
            lambda messages: say("done: " + "; ".join(
                m["content"] for m in messages if m["role"] == "tool"))]


def test_a_call_that_needs_a_yes_pauses_the_run_and_the_others_are_answered():
    paused = agent(steps_of_one_round()).run("refund A")
    assert paused.outcome == "awaiting_approval"
    assert paused.pending == [{"id": "c2", "tool_name": "refund", "arguments": {"order_id": "A"},
                               "agent_id": "main", "depth": 0}]
    assert answers(paused) == [("c1", "A: delivered"), ("c3", "B: delivered")]
    assert PAID == []


def test_an_approved_call_runs_in_its_place_and_the_run_goes_on():
    steps = steps_of_one_round()
    paused = agent(steps).run("refund A")
    done = agent(steps[1:]).resume(paused, approvals={"c2": True})
    assert done.outcome == "completed", done.error
    assert PAID == ["A"]
    assert answers(done) == [("c1", "A: delivered"), ("c2", "refunded A"), ("c3", "B: delivered")]
    assert done.final == "done: A: delivered; refunded A; B: delivered"
    assert done.turns == 2  # the paused run's turn, and this one
    kinds = [e.type for e in done.events if e.type.startswith(("approval", "run_"))]
    assert kinds == ["run_start", "approval_request", "run_end", "run_start",
                     "approval_result", "run_end"]


def test_a_refused_call_is_answered_with_a_refusal_the_model_reads():
    steps = steps_of_one_round()
    paused = agent(steps).run("refund A")
    done = agent(steps[1:]).resume(paused, approvals={"c2": False})
    assert done.outcome == "completed"
    assert PAID == []
    [(_, said)] = [a for a in answers(done) if a[0] == "c2"]
    assert said == "Permission denied: the user did not approve this 'refund' call."


def test_an_answer_for_a_call_that_is_not_waiting_is_refused():
    steps = steps_of_one_round()
    paused = agent(steps).run("refund A")
    with pytest.raises(ValueError, match="'c1' is not waiting"):
        agent(steps[1:]).resume(paused, approvals={"c2": True, "c1": True})
    with pytest.raises(ValueError, match="no answer for"):
        agent(steps[1:]).resume(paused, approvals={})
    done = agent(steps[1:]).resume(paused, approvals={"c2": True})
    with pytest.raises(ValueError, match="nothing to approve"):
        agent([say("x")]).resume(done, approvals={"c2": True})  # stale: already answered
    assert PAID == ["A"]


def test_a_resumed_run_can_pause_again_and_go_on_again():
    steps = [tool_call("refund", order_id="A", id="r1"), tool_call("refund", order_id="B", id="r2"),
             say("both")]
    first = agent(steps).run("refund A and B")
    second = agent(steps[1:]).resume(first, approvals={"r1": True})
    assert second.outcome == "awaiting_approval"
    assert [p["id"] for p in second.pending] == ["r2"]
    third = agent(steps[2:]).resume(second, approvals={"r2": True})
    assert third.outcome == "completed" and PAID == ["A", "B"]
    assert third.turns == 3


def test_the_budget_spent_before_the_pause_counts_after_it():
    steps = [tool_call("look", order_id="A"), tool_call("refund", order_id="A", id="r1"),
             tool_call("look", order_id="B"), say("done")]
    paused = agent(steps, max_tool_calls=2).run("x")
    assert spent(paused)["tool_calls"] == 1
    done = agent(steps[2:], max_tool_calls=2).resume(paused, approvals={"r1": True})
    assert done.outcome == "tool_call_limit"  # look, refund: the third call is one too many
    assert PAID == ["A"]


def test_a_plan_is_carried_through_the_pause():
    todos = [{"content": "Refund A", "status": "in_progress"}]
    steps = [tool_call("todo_write", todos=todos), tool_call("refund", order_id="A", id="r1"),
             tool_call("todo_write", todos=[{**todos[0], "status": "completed"}]), say("done")]
    paused = agent(steps, planning=True, reminder_after=99).run("Refund A, then say so")
    assert [i.content for i in paused.plan] == ["Refund A"]
    done = agent(steps[2:], planning=True, reminder_after=99).resume(paused, {"r1": True})
    assert done.outcome == "completed", done.error
    assert [i.status for i in done.plan] == ["completed"]


def test_resume_after_save_and_load_in_a_new_process(tmp_path):
    steps = steps_of_one_round()
    paused = agent(steps).run("refund A")
    path = paused.save(tmp_path / "paused.json")
    paid = tmp_path / "paid.txt"
    script = textwrap.dedent(f"""
        from harness import Agent, Permissions, RunResult, ScriptedModel, say, tool

        @tool(side_effects=True)
        def refund(order_id: str) -> str:
            \"\"\"Refund an order.\"\"\"
            open({str(paid)!r}, "a").write(order_id)
            return f"refunded {{order_id}}"

        @tool(parallel=True)
        def look(order_id: str) -> str:
            \"\"\"Look an order up.\"\"\"
            return f"{{order_id}}: delivered"

        agent = Agent(ScriptedModel([say("done")]), [look, refund],
                      permissions=Permissions({{"look": "allow", "refund": "ask"}},
                                              approve="pause"))
        done = agent.resume(RunResult.load({str(path)!r}), approvals={{"c2": True}})
        print(done.outcome, done.turns, [m["tool_call_id"] for m in done.messages
                                         if m["role"] == "tool"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" ", 2)[:2] == ["completed", "2"]
    assert json.loads(out.stdout.split(" ", 2)[2].replace("'", '"')) == ["c1", "c2", "c3"]
    assert paid.read_text() == "A"
    assert RunResult.load(path).pending[0]["id"] == "c2"


def test_a_permissions_approver_is_a_function_pause_or_none():
    with pytest.raises(TypeError, match="pause"):
        Permissions({"x": "ask"}, approve="later")


def test_a_resumed_run_goes_on_writing_its_call_log(tmp_path):
    from harness.durable import CallLog

    steps = steps_of_one_round()
    log = tmp_path / "calls.jsonl"
    paused = agent(steps).run("refund A", call_log=CallLog(log))
    done = agent(steps[1:]).resume(paused, approvals={"c2": True}, call_log=CallLog(log))
    assert done.outcome == "completed"
    phases = [(e["phase"], e["call_id"]) for e in map(json.loads, log.read_text().splitlines())
              if e.get("phase") in ("intent", "result")]
    assert ("intent", "c2") in phases and ("result", "c2") in phases
    assert phases.index(("intent", "c2")) < phases.index(("result", "c2"))
    assert PAID == ["A"]
