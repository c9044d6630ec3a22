"""The stop gate: a final answer while the plan has open items gets one push back."""

from __future__ import annotations

from harness import Agent, Hooks, ScriptedModel, say, tool_call
from harness.reminder import stop_gate_text

OPEN_PLAN = {"todos": [{"content": "Find the policy", "status": "completed"},
                       {"content": "Check the warranty", "status": "in_progress"},
                       {"content": "Draft the answer", "status": "pending"}]}
OPEN_ITEMS = ["Check the warranty", "Draft the answer"]


def all_done(plan: dict) -> dict:
    return {"todos": [{**item, "status": "completed"} for item in plan["todos"]]}


def planning_agent(model: ScriptedModel, **options) -> Agent:
    return Agent(model, planning=True, **options)


def test_answer_with_open_items_is_pushed_back_once_naming_them():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p"), say("Here you go."),
                           say("Really done.")])
    planning_agent(model).run("Answer the question")
    pushback = model.requests[2]["messages"][-1]
    assert pushback == {"role": "user", "content": stop_gate_text(OPEN_ITEMS)}
    assert all(item in pushback["content"] for item in OPEN_ITEMS)
    assert "Find the policy" not in pushback["content"]


def test_second_answer_with_open_items_ends_open_items():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p"), say("Here you go."),
                           say("Really done.")])
    result = planning_agent(model).run("Answer the question")
    assert (result.outcome, result.final) == ("open_items", "Really done.")
    assert len(model.requests) == 3
    assert [e.open_items for e in result.events if e.type == "stop_gate"] == [OPEN_ITEMS]


def test_finishing_the_plan_after_the_push_back_completes():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p1"), say("Here you go."),
                           tool_call("todo_write", all_done(OPEN_PLAN), id="p2"),
                           say("All done.")])
    result = planning_agent(model).run("Answer the question")
    assert (result.outcome, result.final) == ("completed", "All done.")


def test_clearing_the_plan_after_the_push_back_completes():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p1"), say("Here you go."),
                           tool_call("todo_write", todos=[], id="p2"),
                           say("Not needed after all.")])
    result = planning_agent(model).run("Answer the question")
    assert result.outcome == "completed"


def test_empty_plan_completes_without_push_back():
    model = ScriptedModel([say("Paris.")])
    result = planning_agent(model).run("Capital of France?")
    assert (result.outcome, result.final) == ("completed", "Paris.")
    assert len(model.requests) == 1


def test_completed_plan_completes_without_push_back():
    model = ScriptedModel([tool_call("todo_write", all_done(OPEN_PLAN), id="p"), say("Done.")])
    result = planning_agent(model).run("Answer the question")
    assert result.outcome == "completed"
    assert [e for e in result.events if e.type == "stop_gate"] == []


def test_stop_hook_counts_push_backs():
    seen = []
    hooks = Hooks()
    hooks.on("stop", lambda event: seen.append((event.pushbacks, event.open_items, event.final)))
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p"), say("Here you go."),
                           say("Really done.")])
    planning_agent(model, hooks=hooks).run("Answer the question")
    assert seen == [(0, OPEN_ITEMS, "Here you go."), (1, OPEN_ITEMS, "Really done.")]


def test_an_answer_on_the_last_turn_with_open_items_is_kept_not_pushed_back():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p"), say("Here you go."),
                           say("Really done.")])
    result = planning_agent(model, max_turns=2).run("Answer the question")
    assert (result.outcome, result.final) == ("open_items", "Here you go.")
    assert len(model.requests) == 2
    assert result.messages[-1] == {"role": "assistant", "content": "Here you go."}
    assert [e.type for e in result.events if e.type == "stop_gate"] == []


def test_push_back_uses_a_turn_of_the_budget():
    model = ScriptedModel([tool_call("todo_write", OPEN_PLAN, id="p1"), say("Here you go."),
                           tool_call("todo_write", all_done(OPEN_PLAN), id="p2"),
                           say("All done.")])
    result = planning_agent(model, max_turns=3).run("Answer the question")
    assert result.outcome == "turn_limit"
    assert result.turns == 3


def test_without_planning_an_answer_completes():
    model = ScriptedModel([say("Paris.")])
    result = Agent(model).run("Capital of France?")
    assert result.outcome == "completed"
    assert [e.type for e in result.events if e.type in ("stop", "stop_gate")] == ["stop"]


def test_stop_gate_text_names_every_open_item():
    text = stop_gate_text(["Check the warranty", "Draft the answer"])
    assert "Check the warranty" in text
    assert "Draft the answer" in text
    assert "todo_write" in text
