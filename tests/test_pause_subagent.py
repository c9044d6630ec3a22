"""A sub-agent's call that waits for a person (issue 30, the Pause contract): the whole run
pauses, with the call in ``result.pending`` under the sub-agent's ``agent_id`` and
``depth``; ``agent.resume`` goes on into the sub-agent, whose answer the parent then reads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness import Agent, Permissions, ScriptedModel, say, tool, tool_call

PAID: list[str] = []


@tool(side_effects=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    PAID.append(order_id)
    return f"refunded {order_id}"


@tool
def look(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: delivered"


def agent(steps) -> Agent:
    perms = Permissions({"look": "allow", "refund": "ask"}, approve="pause")
    return Agent(ScriptedModel(steps), [look, refund], permissions=perms, subagents=True,
                 subagent_tools=["look", "refund"])


@pytest.fixture(autouse=True)
def _fresh():
    PAID.clear()


def echo(messages) -> dict:
    """The sub-agent's answer: what its tools returned (it reads its own transcript)."""
    return say("sub: " + "; ".join(m["content"] for m in messages if m["role"] == "tool"))


def parent_answer(messages) -> dict:
    return say("main: " + "; ".join(m["content"] for m in messages if m["role"] == "tool"))


STEPS = [tool_call("delegate_task", task="refund A", id="d1"),      # main
         tool_call("look", order_id="A", id="s1"),                  # main.sub1
         tool_call("refund", order_id="A", id="s2"),                # main.sub1: waits
         echo,                                                      # main.sub1 (resumed)
         parent_answer]                                             # main


def test_a_sub_agents_call_pauses_the_whole_run_with_its_agent_id_and_depth():
    paused = agent(STEPS).run("refund A")
    assert paused.outcome == "awaiting_approval"
    assert paused.pending == [{"id": "s2", "tool_name": "refund", "arguments": {"order_id": "A"},
                               "agent_id": "main.sub1", "depth": 1}]
    assert PAID == []
    assert not [m for m in paused.messages if m.get("tool_call_id") == "d1"]  # d1 waits too
    assert [(d.child_id, d.outcome, d.call_id) for d in paused.delegations] == [
        ("main.sub1", "awaiting_approval", "d1")]


def test_resume_goes_on_into_the_sub_agent_and_the_parent_reads_its_answer():
    paused = agent(STEPS).run("refund A")
    done = agent(STEPS[3:]).resume(paused, approvals={"s2": True})
    assert done.outcome == "completed", done.error
    assert PAID == ["A"]
    assert done.final == "main: sub: A: delivered; refunded A"
    assert [(d.child_id, d.outcome, d.tool_calls) for d in done.delegations] == [
        ("main.sub1", "completed", 2)]
    assert done.turns == 2 and done.requests == 5
    ran = [(e.agent_id, e.data["call_id"]) for e in done.events
           if e.type == "tool_result" and e.data["ran"]]
    assert ran == [("main.sub1", "s1"), ("main.sub1", "s2"), ("main", "d1")]


def test_a_refused_sub_agent_call_is_answered_with_a_refusal_it_reads():
    paused = agent(STEPS).run("refund A")
    done = agent(STEPS[3:]).resume(paused, approvals={"s2": False})
    assert done.outcome == "completed"
    assert PAID == []
    assert "did not approve" in done.final and "refunded" not in done.final


def test_a_resumed_sub_agent_may_pause_again_and_resume_again():
    steps = [tool_call("delegate_task", task="refund A and B", id="d1"),
             tool_call("refund", order_id="A", id="s1"),
             tool_call("refund", order_id="B", id="s2"), echo, parent_answer]
    first = agent(steps).run("refund A and B")
    assert [p["id"] for p in first.pending] == ["s1"]
    second = agent(steps[2:]).resume(first, approvals={"s1": True})
    assert second.outcome == "awaiting_approval"
    assert [(p["id"], p["agent_id"]) for p in second.pending] == [("s2", "main.sub1")]
    done = agent(steps[3:]).resume(second, approvals={"s2": True})
    assert done.outcome == "completed", done.error
    assert PAID == ["A", "B"]
    assert done.final == "main: sub: refunded A; refunded B"


def test_two_sub_agents_wait_in_one_round_and_each_resumes_into_its_own_transcript():
    steps = [{"role": "assistant", "content": None, "tool_calls": [
                 {"id": "d1", "type": "function", "function": {
                     "name": "delegate_task", "arguments": '{"task": "refund A"}'}},
                 {"id": "d2", "type": "function", "function": {
                     "name": "delegate_task", "arguments": '{"task": "refund B"}'}}]},
             tool_call("refund", order_id="A", id="a1"),
             tool_call("refund", order_id="B", id="b1"),
             echo, echo, parent_answer]
    paused = agent(steps).run("refund A and B")
    assert [(p["id"], p["agent_id"]) for p in paused.pending] == [
        ("a1", "main.sub1"), ("b1", "main.sub2")]
    done = agent(steps[3:]).resume(paused, approvals={"a1": True, "b1": False})
    assert done.outcome == "completed", done.error
    assert PAID == ["A"]
    assert done.final.startswith("main: sub: refunded A; sub: Permission denied")
    assert [d.child_id for d in done.delegations] == ["main.sub1", "main.sub2"]


def test_a_delegation_after_the_resume_gets_the_next_number():
    steps = [*STEPS[:4], tool_call("delegate_task", task="look B", id="d2"),
             tool_call("look", order_id="B", id="t1"), echo, parent_answer]
    paused = agent(steps).run("refund A, then look B up")
    done = agent(steps[3:]).resume(paused, approvals={"s2": True})
    assert done.outcome == "completed", done.error
    assert [d.child_id for d in done.delegations] == ["main.sub1", "main.sub2"]


def test_an_answer_for_a_sub_agent_call_that_is_not_waiting_is_refused():
    paused = agent(STEPS).run("refund A")
    with pytest.raises(ValueError, match="not waiting"):
        agent(STEPS[3:]).resume(paused, approvals={"s2": True, "s1": True})


def test_a_paused_sub_agent_resumes_after_save_and_load_in_a_new_process(tmp_path):
    path = agent(STEPS).run("refund A").save(tmp_path / "paused.json")
    paid = tmp_path / "paid.txt"
    script = textwrap.dedent(f"""
        from harness import Agent, Permissions, RunResult, ScriptedModel, say, tool

        @tool(side_effects=True)
        def refund(order_id: str) -> str:
            \"\"\"Refund an order.\"\"\"
            open({str(paid)!r}, "a").write(order_id)
            return f"refunded {{order_id}}"

        @tool
        def look(order_id: str) -> str:
            \"\"\"Look an order up.\"\"\"
            return f"{{order_id}}: delivered"

        def echo(messages):
            return say(" / ".join(m["content"] for m in messages if m["role"] == "tool"))

        perms = Permissions({{"look": "allow", "refund": "ask"}}, approve="pause")
        agent = Agent(ScriptedModel([echo, echo]), [look, refund], permissions=perms,
                      subagents=True, subagent_tools=["look", "refund"])
        done = agent.resume(RunResult.load({str(path)!r}), approvals={{"s2": True}})
        print(done.outcome, "|", done.final)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "completed | A: delivered / refunded A"
    assert paid.read_text() == "A"
