"""``plan_from_words``: the first request is forced to `todo_write` when the task's own
words ask for steps (the GeekAgent article's rule), off by default, on in ``run``."""

from __future__ import annotations

import pytest

from harness import Agent, ScriptedModel, say, tool_call
from harness.reminder import asks_for_steps, forced
from harness.ui import cli

FORCED = forced("todo_write")


def first_choices(task: str, **settings: object) -> list:
    model = ScriptedModel([tool_call("todo_write", todos=[{"content": "Answer",
                                                           "status": "completed"}]),
                           say("Done.")])
    Agent(model, planning=True, **settings).run(task)
    return [request["tool_choice"] for request in model.requests]


@pytest.mark.parametrize("task", [
    "让子 Agent 比较 TypeScript 中 interface 和 type 的区别，并给出选择建议",  # its sample
    "读一下退货政策，然后回答客户",
    "最后把结论写进 notes/",
    "检查三个订单并汇总",
    "检查三个订单并总结",
    "先查订单，再把结果汇总给我",
    "再检查一遍给出结论",
    "给我一份任务清单",
    "写一个todo列表",
    "Read the shipping policy, then check ORD-1003.",
    "Check ORD-1003. Finally, email Ada.",
    "Compare the two policies and give a recommendation.",
    "Make a to-do list for the returns audit.",
    "TODO: check ORD-1003",
    "Merge the two task\tlists.",
    "Read docs/faq.md and summarise it.",
])
def test_a_task_that_asks_for_steps_forces_the_first_request_only(task):
    assert asks_for_steps(task)
    assert first_choices(task, plan_from_words=True) == [FORCED, "auto"]


@pytest.mark.parametrize("task", [
    "What is the return window for opened headphones?",
    "Is ORD-1003 shipped yet?",
    "Fix the authentication bug in src/orders.py.",   # then inside a word
    "Find our Mastodon link in the FAQ.",             # todo inside a word
    "Summarize the warranty policy.",                 # one summary is one step
    "Finalize the reply to Ada.",
    "退货期是多久？",
    "再见",                                             # 再 with no 给出/总结/汇总 after it
])
def test_a_task_without_step_words_is_left_auto(task):
    assert not asks_for_steps(task)
    assert first_choices(task, plan_from_words=True) == ["auto", "auto"]


def test_off_by_default_the_words_force_nothing():
    assert first_choices("Read the policy, then answer.") == ["auto", "auto"]


def test_plan_first_still_forces_a_task_without_step_words():
    model = ScriptedModel([tool_call("todo_write", todos=[]), say("Done.")])
    Agent(model, planning=True, plan_from_words=True).run("Is ORD-1003 shipped?",
                                                          plan_first=True)
    assert model.requests[0]["tool_choice"] == FORCED


def test_the_words_of_the_new_task_count_when_a_conversation_goes_on():
    agent = Agent(ScriptedModel([say("Fine."), tool_call("todo_write", todos=[]),
                                 say("Done.")]), planning=True, plan_from_words=True)
    first = agent.run("Hello")
    agent.run("Now read the policy, then answer.", messages=first.messages)
    assert [r["tool_choice"] for r in agent.model.requests] == ["auto", FORCED, "auto"]


def test_plan_from_words_without_planning_is_refused_when_the_agent_is_made():
    with pytest.raises(ValueError, match="planning=True"):
        Agent(ScriptedModel([say("x")]), plan_from_words=True)


def test_the_terminal_run_turns_it_on_and_the_demo_does_not(tmp_path):
    from harness.workspace.folder import Workspace

    workspace = Workspace.sample()
    assert cli._agent(ScriptedModel([]), workspace, full=True).plan_from_words
    assert not cli._agent(ScriptedModel([]), workspace, full=False).plan_from_words


@pytest.mark.parametrize("task, asks", [
    ("método", False), ("Thenéa lists", False), ("éthen", False), ("Mastodon", False),
    ("todo_list", True), ("todo1", True), ("2then", True), ("写一个todo列表", True)])
def test_a_step_word_has_no_letter_of_an_alphabet_right_before_or_after(task, asks):
    """Issue 33: the rule says "no letter", and é is a letter (\\b and [a-z] both got it wrong)."""
    assert asks_for_steps(task) is asks
