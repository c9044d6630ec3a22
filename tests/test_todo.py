"""The plan: `TodoList` rules, copies, listeners, and the `todo_write` tool in a run."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from harness import Agent, ScriptedModel, TodoItem, TodoList, say, tool, tool_call
from harness.todo import PLANNING_PROMPT, PlanError, render
from harness.tools import ToolArgumentError

TWO_STEPS = [{"content": "Find the policy", "status": "in_progress"},
             {"content": "Draft the answer", "status": "pending"}]


# -- local helpers ----------------------------------------------------------------------

def items(*pairs: tuple[str, str]) -> list[TodoItem]:
    return [TodoItem(content=c, status=s) for c, s in pairs]


def planned_list() -> TodoList:
    plan = TodoList()
    plan.update(TWO_STEPS)
    return plan


def tool_results(result) -> list:
    return [e for e in result.events if e.type == "tool_result"]


# -- TodoItem and TodoList ------------------------------------------------------------

def test_todo_item_refuses_unknown_fields():
    with pytest.raises(ValidationError, match="priority"):
        TodoItem(content="Find the policy", status="pending", priority="high")


def test_update_replaces_the_whole_list():
    plan = planned_list()
    plan.update([{"content": "Only this", "status": "pending"}])
    assert plan.snapshot() == items(("Only this", "pending"))


def test_update_returns_the_rendered_plan():
    assert TodoList().update(TWO_STEPS) == "[>] Find the policy\n[ ] Draft the answer"


def test_empty_list_clears_the_plan():
    plan = planned_list()
    plan.update([])
    assert plan.snapshot() == []


def test_twenty_items_are_accepted():
    plan = TodoList()
    plan.update([{"content": f"step {n}", "status": "pending"} for n in range(20)])
    assert len(plan.snapshot()) == 20


def test_update_accepts_todo_items_as_well_as_dicts():
    plan = TodoList()
    plan.update(items(("Find the policy", "completed")))
    assert plan.snapshot() == items(("Find the policy", "completed"))


INVALID_UPDATES = {
    "too_many_items": [{"content": f"step {n}", "status": "pending"} for n in range(21)],
    "blank_content": [{"content": "   ", "status": "pending"}],
    "empty_content": [{"content": "", "status": "pending"}],
    "unknown_status": [{"content": "Find the policy", "status": "done"}],
    "two_in_progress": [{"content": "a", "status": "in_progress"},
                        {"content": "b", "status": "in_progress"}],
    "unknown_item_field": [{"content": "a", "status": "pending", "owner": "me"}],
    "valid_first_item_then_a_blank_one": [{"content": "Fine", "status": "completed"},
                                          {"content": " ", "status": "pending"}],
    "null": None,
    "the_tool_arguments_instead_of_the_list": {"todos": TWO_STEPS},
    "a_string": "Find the policy",
}


@pytest.mark.parametrize("new", INVALID_UPDATES.values(), ids=INVALID_UPDATES.keys())
def test_invalid_update_raises_and_keeps_the_old_plan(new):
    plan = planned_list()
    old = plan.snapshot()
    with pytest.raises(PlanError):
        plan.update(new)
    assert plan.snapshot() == old
    assert plan.render() == render(old)


def test_changing_the_list_passed_in_cannot_change_the_plan():
    passed = [dict(item) for item in TWO_STEPS]
    plan = TodoList()
    plan.update(passed)
    passed[0]["status"] = "completed"
    passed.append({"content": "Sneaked in", "status": "pending"})
    assert plan.snapshot() == items(("Find the policy", "in_progress"),
                                    ("Draft the answer", "pending"))


def test_update_error_names_every_bad_item():
    with pytest.raises(PlanError) as refused:
        TodoList().update([{"content": "Fine", "status": "pending"},
                           {"content": " ", "status": "pending"},
                           {"content": "Odd", "status": "done"}])
    assert "'todos.1.content'" in str(refused.value)
    assert "'todos.2.status'" in str(refused.value)


def test_changing_a_snapshot_cannot_change_the_plan():
    plan = planned_list()
    got = plan.snapshot()
    got.clear()
    assert len(plan.snapshot()) == 2


def test_snapshot_items_cannot_be_edited_in_place():
    plan = planned_list()
    with pytest.raises(ValidationError):
        plan.snapshot()[0].status = "completed"
    assert plan.snapshot()[0].status == "in_progress"


def test_render_marks_each_status():
    plan = items(("Done", "completed"), ("Doing", "in_progress"), ("Next", "pending"))
    assert render(plan) == "[x] Done\n[>] Doing\n[ ] Next"


def test_todo_list_renders_with_the_module_formatter():
    plan = planned_list()
    assert plan.render() == render(plan.snapshot())


def test_todo_write_schema_forbids_unknown_fields_and_requires_todos():
    params = TodoList().as_tool().schema()["function"]["parameters"]
    item = params["$defs"]["TodoItem"]
    assert params["required"] == ["todos"]
    assert params["additionalProperties"] is False
    assert item["additionalProperties"] is False
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]


# -- todo_write inside a run ------------------------------------------------------------

def test_todo_write_result_shows_the_whole_plan_with_markers():
    model = ScriptedModel([
        tool_call("todo_write", todos=[{"content": "Find the policy", "status": "completed"},
                                       {"content": "Read the terms", "status": "in_progress"},
                                       {"content": "Draft the answer", "status": "pending"}],
                  id="c1"),
        say("Done."),
    ])
    result = Agent(model, planning=True).run("Answer the question")
    output = tool_results(result)[0].output
    assert output.endswith("[x] Find the policy\n[>] Read the terms\n[ ] Draft the answer")
    assert result.messages[3] == {"role": "tool", "tool_call_id": "c1", "content": output}


REFUSED_ARGUMENTS = {
    "missing_todos": "{}",
    "null_todos": '{"todos": null}',
    "unknown_top_level_field": '{"todos": [], "note": "x"}',
    "unknown_item_field": '{"todos": [{"content": "a", "status": "pending", "owner": "me"}]}',
    "second_json_value": '{"todos": []} {"todos": []}',
    "blank_content": '{"todos": [{"content": "  ", "status": "pending"}]}',
    "unknown_status": '{"todos": [{"content": "a", "status": "done"}]}',
    "two_in_progress": json.dumps({"todos": [{"content": "a", "status": "in_progress"},
                                             {"content": "b", "status": "in_progress"}]}),
    "too_many_items": json.dumps({"todos": [{"content": f"s{n}", "status": "pending"}
                                            for n in range(21)]}),
    "not_json": '{"todos": [',
}


@pytest.mark.parametrize("raw", REFUSED_ARGUMENTS.values(), ids=REFUSED_ARGUMENTS.keys())
def test_refused_todo_write_keeps_the_old_plan(raw):
    model = ScriptedModel([tool_call("todo_write", todos=TWO_STEPS, id="c1"),
                           tool_call("todo_write", raw, id="c2"),
                           say("Stopping."), say("Stopping anyway.")])
    result = Agent(model, planning=True).run("Answer the question")
    refused = tool_results(result)[1]
    assert refused.ok is False
    assert refused.output.startswith("Error")
    assert result.messages[5] == {"role": "tool", "tool_call_id": "c2", "content": refused.output}
    assert result.plan == [TodoItem(**item) for item in TWO_STEPS]
    assert [e.todos for e in result.events if e.type == "plan_update"] == [TWO_STEPS]


def test_empty_todos_clears_the_plan_in_a_run():
    model = ScriptedModel([tool_call("todo_write", todos=TWO_STEPS, id="c1"),
                           tool_call("todo_write", todos=[], id="c2"), say("Done.")])
    result = Agent(model, planning=True).run("Answer the question")
    assert result.plan == []
    assert tool_results(result)[1].ok is True
    assert result.outcome == "completed"


def test_plan_update_event_carries_the_plan_and_the_changes():
    model = ScriptedModel([
        tool_call("todo_write", todos=TWO_STEPS, id="c1"),
        tool_call("todo_write", todos=[{"content": "Find the policy", "status": "completed"},
                                       {"content": "Draft the answer", "status": "in_progress"}],
                  id="c2"),
        say("Done."),
    ])
    result = Agent(model, planning=True).run("Answer the question")
    first, second = [e for e in result.events if e.type == "plan_update"]
    assert first.added == ["Find the policy", "Draft the answer"]
    assert (first.removed, first.status_changes) == ([], [])
    assert second.todos == [{"content": "Find the policy", "status": "completed"},
                            {"content": "Draft the answer", "status": "in_progress"}]
    assert second.status_changes == [["Find the policy", "in_progress", "completed"],
                                     ["Draft the answer", "pending", "in_progress"]]
    assert (second.added, second.removed) == ([], [])


def test_run_result_plan_is_the_final_plan():
    model = ScriptedModel([
        tool_call("todo_write", todos=[{"content": "Look", "status": "completed"}], id="c1"),
        say("Done."),
    ])
    result = Agent(model, planning=True).run("Answer the question")
    assert result.plan == items(("Look", "completed"))
    assert result.plan_text() == "[x] Look"


def test_second_run_starts_with_an_empty_plan():
    model = ScriptedModel([tool_call("todo_write", todos=TWO_STEPS, id="c1"), say("Stop."),
                           say("Stop anyway."), say("Hello.")])
    agent = Agent(model, planning=True)
    first = agent.run("A long task")
    second = agent.run("Say hello")
    assert (first.outcome, len(first.plan)) == ("open_items", 2)
    assert (second.outcome, second.plan) == ("completed", [])


def test_registering_todo_write_by_hand_with_planning_raises():
    @tool
    def todo_write(todos: str) -> str:
        """My own plan tool."""
        return todos

    with pytest.raises(ValueError, match="'todo_write' is the name of a tool the harness makes"):
        Agent(ScriptedModel([]), [todo_write], planning=True)


def test_planning_adds_todo_write_and_the_planning_prompt():
    model = ScriptedModel([say("Hi.")])
    Agent(model, planning=True).run("Say hi")
    request = model.requests[0]
    assert [t["function"]["name"] for t in request["tools"]] == ["todo_write"]
    assert request["messages"][0]["content"].endswith(PLANNING_PROMPT)


def test_without_planning_there_is_no_todo_write_and_no_planning_prompt():
    model = ScriptedModel([say("Hi.")])
    Agent(model).run("Say hi")
    request = model.requests[0]
    assert request["tools"] == []
    assert PLANNING_PROMPT not in request["messages"][0]["content"]


def test_planning_prompt_says_when_to_plan_and_when_not():
    text = PLANNING_PROMPT.lower()
    assert "todo_write" in text
    assert "several steps" in text
    assert "one-step" in text


def test_every_todo_write_refusal_says_the_plan_was_not_changed():
    plan = TodoList()
    tool = plan.as_tool()
    for raw in ('{"todos": [{"content": "  ", "status": "pending"}]}',
                '{"todos": null}', '{"todos": []} {}', '{"todos": [{"content": "a"}]}'):
        with pytest.raises(ToolArgumentError, match="The plan was not changed"):
            tool.parse(raw)


def test_plan_update_comes_after_the_tool_result_of_its_call():
    model = ScriptedModel([tool_call("todo_write", todos=TWO_STEPS, id="c1"), say("Done.")])
    seen: list[str] = []
    result = Agent(model, planning=True, observers=[lambda e: seen.append(e.type)]).run("go")
    calls = [t for t in seen if t in ("tool_call", "tool_result", "plan_update")]
    assert calls == ["tool_call", "tool_result", "plan_update"]
    assert [e.type for e in result.events if e.type in calls] == calls


def test_the_cap_on_plan_items_is_the_one_the_tool_describes():
    plan = TodoList(max_items=3)
    tool_ = plan.as_tool()
    assert "At most 3 items" in tool_.description
    four = [{"content": f"step {i}", "status": "pending"} for i in range(4)]
    refused = tool_.execute(tool_.parse(json.dumps({"todos": four})))
    assert refused.output == ("Error: a plan holds at most 3 items, got 4. "
                              "The plan was not changed.")
    assert "At most 20 items" in TodoList().as_tool().description
