"""Lesson 05's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l05 import (  # noqa: E402
    check_choose_tool_choice,
    check_plan_reminder,
    check_wants_plan,
)
from solutions import l05  # noqa: E402

from harness.reminder import forced  # noqa: E402


def test_plan_reminder_check_accepts_the_reference():
    assert check_plan_reminder(l05.PlanReminder) is True


def test_plan_reminder_check_rejects_counting_by_tool_name():
    class ByName(l05.PlanReminder):
        def after_round(self, tool_names, plan_updated):
            return super().after_round(tool_names, "todo_write" in tool_names)

    assert check_plan_reminder(ByName) is False


def test_plan_reminder_check_rejects_a_reminder_that_does_not_reset_after_firing():
    class NoReset:
        def __init__(self, after=3):
            self.after, self.rounds = after, 0

        def after_round(self, tool_names, plan_updated):
            self.rounds = 0 if plan_updated else self.rounds + 1
            return "update your plan" if self.rounds >= self.after else None

    assert check_plan_reminder(NoReset) is False


def test_plan_reminder_check_rejects_firing_one_round_late():
    class OneLate(l05.PlanReminder):
        def __init__(self, after=3):
            super().__init__(after + 1)

    assert check_plan_reminder(OneLate) is False


def test_choose_tool_choice_check_accepts_the_reference():
    assert check_choose_tool_choice(l05.choose_tool_choice) is True


def test_choose_tool_choice_check_rejects_forcing_every_request_with_plan_first():
    def always_with_plan_first(turn, plan_first, last_round_tools):
        forced_now = plan_first or "delegate_task" in last_round_tools
        return forced("todo_write") if forced_now else "auto"

    assert check_choose_tool_choice(always_with_plan_first) is False


def test_choose_tool_choice_check_rejects_a_delegation_test_on_the_whole_round():
    def only_a_lone_delegation(turn, plan_first, last_round_tools):
        forced_now = (turn == 1 and plan_first) or last_round_tools == ["delegate_task"]
        return forced("todo_write") if forced_now else "auto"

    assert check_choose_tool_choice(only_a_lone_delegation) is False


def test_wants_plan_check_accepts_the_reference():
    assert check_wants_plan(l05.wants_plan) is True


def test_wants_plan_check_rejects_always_planning():
    assert check_wants_plan(lambda task: True) is False


def test_wants_plan_check_rejects_then_found_inside_authentication(capsys):
    def substring(task: str) -> bool:
        words = ("todo", "to-do", "task list", "then", "finally", "and summarize",
                 "and summarise")
        return any(word in task.lower() for word in words)

    assert check_wants_plan(substring) is False
    assert "authentication" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_rule_that_minds_capitals(capsys):
    def case_sensitive(task: str) -> bool:
        return re.search(r"\b(?:todo|to-do|task list|then|finally|and summari[sz]e)\b",
                         task) is not None

    assert check_wants_plan(case_sensitive) is False
    assert "compare without case" in capsys.readouterr().out


def test_wants_plan_check_rejects_words_split_on_spaces_only(capsys):
    def split_words(task: str) -> bool:
        words = task.lower().split()
        pairs = {" ".join(p) for p in itertools.pairwise(words)}
        return bool({"todo", "to-do", "then", "finally"} & set(words)
                    or {"task list", "and summarize", "and summarise"} & pairs)

    assert check_wants_plan(split_words) is False
    assert "TODO:" in capsys.readouterr().out


def test_wants_plan_check_rejects_summarize_on_its_own():
    def any_summary(task: str) -> bool:
        return l05.wants_plan(task) or "summar" in task.lower()

    assert check_wants_plan(any_summary) is False


def test_wants_plan_check_rejects_a_match_object_instead_of_a_bool():
    def match(task: str):
        return l05.PLAN_WORDS.search(task)

    assert check_wants_plan(match) is False
