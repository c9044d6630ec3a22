"""The stale-plan reminder: when it fires, what counts, and where it lands."""

from __future__ import annotations

import pytest

from harness import Agent, Hooks, Permissions, ScriptedModel, parallel, say, tool, tool_call
from harness.reminder import REMINDER_TEXT, Reminder

PLAN = {"todos": [{"content": "Look it up", "status": "completed"}]}
REMINDER = {"role": "user", "content": REMINDER_TEXT.format(rounds=3)}


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def agent(model: ScriptedModel, **options) -> Agent:
    return Agent(model, [lookup], planning=True, **options)


def reminders(result) -> list:
    return [e for e in result.events if e.type == "reminder"]


def last_messages(model: ScriptedModel) -> list[dict]:
    """The last message of every request the model received."""
    return [request["messages"][-1] for request in model.requests]


# -- Reminder on its own ----------------------------------------------------------------

def test_reminder_fires_on_the_third_stale_round_then_resets():
    reminder = Reminder(after=3)
    due = [reminder.after_round(["lookup"], plan_updated=False) for _ in range(6)]
    assert due == [None, None, REMINDER_TEXT.format(rounds=3)] * 2


def test_successful_update_resets_the_count():
    reminder = Reminder(after=3)
    reminder.after_round(["lookup"], plan_updated=False)
    reminder.after_round(["lookup"], plan_updated=False)
    assert reminder.after_round(["todo_write"], plan_updated=True) is None
    assert reminder.rounds == 0


def test_success_counting_keeps_counting_a_refused_update():
    reminder = Reminder(after=2)
    reminder.after_round(["lookup"], plan_updated=False)
    assert reminder.after_round(["todo_write"], plan_updated=False) is not None


def test_name_counting_resets_on_a_refused_update():
    reminder = Reminder(after=2, counting="name")
    reminder.after_round(["lookup"], plan_updated=False)
    assert reminder.after_round(["todo_write"], plan_updated=False) is None
    assert reminder.rounds == 0


def test_reminder_text_names_the_number_of_rounds():
    reminder = Reminder(after=5)
    due = [reminder.after_round(["lookup"], plan_updated=False) for _ in range(5)]
    assert due[-1] == REMINDER_TEXT.format(rounds=5)
    assert "5" in due[-1]


@pytest.mark.parametrize("options", [{"after": 0}, {"counting": "calls"}])
def test_bad_reminder_settings_raise(options):
    with pytest.raises(ValueError):
        Reminder(**options)


def test_agent_refuses_a_bad_reminder_setting_when_it_is_made():
    with pytest.raises(ValueError, match="reminder_after"):
        Agent(ScriptedModel([]), planning=True, reminder_after=0)


# -- the reminder in a run --------------------------------------------------------------

def test_reminder_is_the_last_message_of_the_request_after_the_third_round():
    model = ScriptedModel([*(tool_call("lookup", query=q, id=q) for q in "abc"), say("Done.")])
    result = agent(model).run("Research")
    assert last_messages(model)[1:] == [
        {"role": "tool", "tool_call_id": "a", "content": "found a"},
        {"role": "tool", "tool_call_id": "b", "content": "found b"},
        REMINDER,
    ]
    assert [(e.text, e.rounds) for e in reminders(result)] == [(REMINDER["content"], 3)]


def test_reminder_fires_again_after_three_more_rounds():
    model = ScriptedModel([*(tool_call("lookup", query=str(n), id=str(n)) for n in range(7)),
                           say("Done.")])
    result = agent(model, max_turns=20).run("Research")
    at = [k for k, message in enumerate(last_messages(model)) if message == REMINDER]
    assert at == [3, 6]
    assert len(reminders(result)) == 2


def test_reminder_after_is_configurable():
    model = ScriptedModel([*(tool_call("lookup", query=q, id=q) for q in "ab"), say("Done.")])
    agent(model, reminder_after=2).run("Research")
    assert last_messages(model)[2] == {"role": "user", "content": REMINDER_TEXT.format(rounds=2)}


def test_successful_update_resets_the_count_in_a_run():
    model = ScriptedModel([
        *(tool_call("lookup", query=q, id=q) for q in "ab"), tool_call("todo_write", PLAN, id="p"),
        *(tool_call("lookup", query=q, id=q) for q in "cde"), say("Done."),
    ])
    result = agent(model, max_turns=10).run("Research")
    assert result.outcome == "completed"
    at = [k for k, message in enumerate(last_messages(model)) if message == REMINDER]
    assert at == [6]


@pytest.mark.parametrize("blocked_by", ["pre_tool_use_hook", "permission_deny"])
def test_refused_update_unknown_tool_and_blocked_call_all_count_as_stale(blocked_by):
    hooks, permissions = Hooks(), None
    if blocked_by == "pre_tool_use_hook":
        hooks.on("pre_tool_use", lambda e: "Blocked." if e.tool_name == "lookup" else None)
    else:
        permissions = Permissions({"lookup": "deny"}, default="allow")
    model = ScriptedModel([
        tool_call("todo_write", todos=[{"content": "", "status": "pending"}], id="a"),
        tool_call("search_web", q="x", id="b"),
        tool_call("lookup", query="c", id="c"),
        say("Done."),
    ])
    result = agent(model, hooks=hooks, permissions=permissions).run("Research")
    statuses = [e.status for e in result.events if e.type == "tool_result"]
    assert statuses == ["invalid_arguments", "unknown_tool", "blocked"]
    assert last_messages(model)[3] == REMINDER


def test_reminder_never_adds_a_turn():
    model = ScriptedModel([*(tool_call("lookup", query=q, id=q) for q in "abc"), say("Done.")])
    result = agent(model, max_turns=3).run("Research")
    assert result.outcome == "turn_limit"
    assert len(model.requests) == 3
    assert len(reminders(result)) == 1


def test_counting_by_name_and_by_success_differ_on_a_refused_update():
    def script() -> ScriptedModel:
        return ScriptedModel([
            tool_call("lookup", query="a", id="a"),
            tool_call("todo_write", todos=[{"content": " ", "status": "pending"}], id="b"),
            tool_call("lookup", query="c", id="c"),
            say("Done."),
        ])

    by_success, by_name = script(), script()
    agent(by_success).run("Research")
    agent(by_name, reminder_counting="name").run("Research")
    assert last_messages(by_success)[3] == REMINDER
    assert last_messages(by_name)[3] == {"role": "tool", "tool_call_id": "c", "content": "found c"}


def test_reminder_comes_after_every_tool_result_of_its_round():
    model = ScriptedModel([
        *(tool_call("lookup", query=q, id=q) for q in "ab"),
        parallel(tool_call("lookup", query="x", id="c1"), tool_call("nope", id="c2"),
                 tool_call("lookup", query="y", id="c3")),
        say("Done."),
    ])
    agent(model).run("Research")
    messages = model.requests[3]["messages"]
    assert messages[-1] == REMINDER
    assistant = messages[-5]
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2", "c3"]
    assert [(m["role"], m["tool_call_id"]) for m in messages[-4:-1]] == [
        ("tool", "c1"), ("tool", "c2"), ("tool", "c3")]


def test_second_run_starts_counting_from_zero():
    model = ScriptedModel([*(tool_call("lookup", query=q, id=q) for q in "ab"), say("First."),
                           tool_call("lookup", query="c", id="c"), say("Second.")])
    one = agent(model)
    first, second = one.run("Research"), one.run("Research again")
    assert reminders(first) == reminders(second) == []
    assert last_messages(model)[4] == {"role": "tool", "tool_call_id": "c", "content": "found c"}


def test_no_reminder_without_planning():
    model = ScriptedModel([*(tool_call("lookup", query=q, id=q) for q in "abc"), say("Done.")])
    result = Agent(model, [lookup]).run("Research")
    assert reminders(result) == []
    assert last_messages(model)[3]["role"] == "tool"
